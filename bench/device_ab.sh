#!/usr/bin/env bash
# One GPU-machine call that checks a build and measures it against another:
#  1. the GPU tests of build D (scripts/gpu_all.sh, part tests: gpu_test and
#     the database tests with every compaction forced onto the GPU);
#  2. with HOST_BW=1, the host's memory and PCIe rates
#     (bench/host_bandwidth.cu, built here with nvcc) into
#     $OUT/bandwidth.jsonl;
#  3. the compact A/B of D against B (bench/ab_compact.sh, ABBA rounds; the
#     CPU executor's reference runs use D's binary) into $OUT/ab.md.
# Everything else ends up in $OUT/all.tgz. The results file quotes the
# command, e.g.
#   D=.carry/s10 B=.carry/s9 HOST_BW=1 OUT=$OUT bash bench/device_ab.sh
#
# D, B     folders holding stripped accelkv-bench, gpu_test and db_test
#          builds (CUDA, sm_90); B may be empty: then D alone is measured
# DNAME, BNAME  their names in the table (default: the folders' names)
# SIZES    value sizes (default "32 128 1024 4096"); ROUNDS (default 3)
# TESTS    0 skips step 1; HOST_BW 1 runs step 2 (default 0)
# BCPU     1: after step 3, B's CPU executor for as many rounds (its
#          medians into $OUT/bcpu.txt), for a change that moves the CPU
#          executor too
# T_TESTS, T_AB  the steps' time limits in seconds (default 240 and 300)
set -uo pipefail
D=${D:?D=folder of the build to check is required}
B=${B:-}
DNAME=${DNAME:-$(basename "$D")}
BNAME=${BNAME:-$(basename "${B:-none}")}
SIZES=${SIZES:-32 128 1024 4096}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:?OUT is required}
mkdir -p "$OUT/tests" "$OUT/ab"
if [[ ${TESTS:-1} != 0 ]]; then
  GPU_TEST_BIN=$D/gpu_test DB_TEST_BIN=$D/db_test BENCH_BIN=$D/accelkv-bench GPU_ALL_PARTS=tests \
    OUT=$OUT/tests timeout "${T_TESTS:-240}" bash scripts/gpu_all.sh >"$OUT/tests.log" 2>&1
  echo "tests rc=$?"
  grep -hE "^\[  (PASSED|FAILED)" "$OUT"/tests/*.log | head
fi
if [[ ${HOST_BW:-0} == 1 ]]; then
  nvcc -O2 -std=c++20 -arch=sm_90 -Xcompiler -Wall,-Wextra,-pthread -Isrc bench/host_bandwidth.cu \
    src/util/streaming_copy.cc -o "$OUT/host_bandwidth" >"$OUT/host_bandwidth.build.log" 2>&1 &&
    timeout 120 "$OUT/host_bandwidth" >"$OUT/bandwidth.jsonl" 2>&1
  echo "host_bandwidth rc=$?"
  cat "$OUT/bandwidth.jsonl"
  rm -f "$OUT/host_bandwidth"
fi
builds="$DNAME=$D/accelkv-bench"
[[ -n $B ]] && builds="$builds $BNAME=$B/accelkv-bench"
BUILDS="$builds" SIZES="$SIZES" ROUNDS=$ROUNDS OUT=$OUT/ab timeout "${T_AB:-300}" \
  bash bench/ab_compact.sh >"$OUT/ab.out" 2>&1
echo "ab rc=$?"
cp "$OUT/ab/ab.md" "$OUT/ab.md" 2>/dev/null && cat "$OUT/ab.md"
if [[ ${BCPU:-0} == 1 && -n $B ]]; then
  mkdir -p "$OUT/bcpu"
  for ((round = 1; round <= ROUNDS; round++)); do
    for v in $SIZES; do
      echo "== $round $v" >>"$OUT/bcpu/log"
      timeout 60 "$B/accelkv-bench" --workload=compact --executor=cpu --threads=16 \
        --num=$((256 * 1000000 * 2 / (3 * (v + 40)))) --key-size=16 --value-size="$v" \
        --json="$OUT/bcpu/rows.jsonl" >>"$OUT/bcpu/log" 2>&1
    done
  done
  python3 - "$OUT/bcpu/rows.jsonl" >"$OUT/bcpu.txt" <<'PY'
import json, statistics, sys
by = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    by.setdefault(r["value_size"], []).append(r["input_gb_per_sec"])
for v, g in by.items():
    print(f"B cpu x16 {v} B: {', '.join(f'{x:.2f}' for x in g)} median {statistics.median(g):.2f}")
PY
  cat "$OUT/bcpu.txt"
fi
cd "$OUT" && tar czf all.tgz ab ab.out tests tests.log bcpu ./*.build.log 2>/dev/null
rm -rf ab ab.out tests tests.log bcpu ./*.build.log
