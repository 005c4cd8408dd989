#!/bin/bash
# Subcompaction ranges balanced by the input tables' indexes
# (bench/results/2026-11-27-h100-balanced-ranges.md): one device call with
# the new build in D and the session's starting build (82d6d1c, ranges from
# the files' metadata) in B. The GPU tests (gpu_all part tests), then the
# compact A/B (ABBA rounds; the CPU executor's reference runs use D's
# binary, so its ranges are balanced), then B's CPU executor (the old
# ranges) for as many rounds. Everything ends up in $OUT/all.tgz.
D=${D:-.carry/s7}
B=${B:-.carry/s6}
SIZES=${SIZES:-32 128 1024 4096}
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT/tests" "$OUT/ab" "$OUT/oldcpu"
GPU_TEST_BIN=$D/gpu_test DB_TEST_BIN=$D/db_test BENCH_BIN=$D/accelkv-bench GPU_ALL_PARTS=tests \
  OUT=$OUT/tests timeout 240 bash scripts/gpu_all.sh >"$OUT/tests.log" 2>&1
echo "tests rc=$?"
grep -hE "^\[  (PASSED|FAILED)" "$OUT"/tests/*.log | head
BUILDS="balanced=$D/accelkv-bench metadata=$B/accelkv-bench" SIZES="$SIZES" \
  ROUNDS=$ROUNDS OUT=$OUT/ab timeout 300 bash bench/ab_compact.sh >"$OUT/ab.out" 2>&1
echo "ab rc=$?"
cat "$OUT/ab/ab.md"
# B's CPU executor: the metadata ranges.
for ((round = 1; round <= ROUNDS; round++)); do
  for v in $SIZES; do
    num=$((256 * 1000000 * 2 / (3 * (v + 40))))
    echo "== $round $v" >>"$OUT/oldcpu/log"
    timeout 60 "$B/accelkv-bench" --workload=compact --executor=cpu --threads=16 --num=$num \
      --key-size=16 --value-size="$v" --json="$OUT/oldcpu/rows.jsonl" >>"$OUT/oldcpu/log" 2>&1
  done
done
python3 - "$OUT/oldcpu/rows.jsonl" <<'PY'
import json, statistics, sys
by = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    by.setdefault(r["value_size"], []).append(r["input_gb_per_sec"])
for v, g in by.items():
    print(f"old cpu x16 {v} B: {', '.join(f'{x:.2f}' for x in g)} median {statistics.median(g):.2f}")
PY
cd "$OUT" && tar czf all.tgz ab tests oldcpu && rm -rf ab tests oldcpu
