#!/bin/bash
# Output blocks of 1 MiB or more encoded by a thread block per 128 KiB
# (EncodeHugeBlocksKernel, HugeBlocksCrcKernel) against a thread block per
# block (the previous build, $B_OLD), device-encode mode, in memory, on the
# H100 machine: per value size (1, 4 and 16 MiB) the CPU executor (16
# subcompactions) once, then in ROUNDS rounds the old and the new build.
# JSON rows go to $OUT/huge.jsonl, each preceded in $OUT/huge.log by
# "== round value variant".
OUT=${OUT:-/tmp/out}
B=${B:-.carry/w23/accelkv-bench}
B_OLD=${B_OLD:-.carry/w22/accelkv-bench}
SIZES=${SIZES:-"1048576 4194304 16777216"}
ROUNDS=${ROUNDS:-"1 2 3"}
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; uname -r; } >"$OUT/huge.log" 2>&1
args() { echo --threads=16 --num=$((256000000 * 2 / (3 * ($1 + 40)))) --key-size=16 --value-size=$1; }
for v in $SIZES; do
  echo "== 0 $v cpu" >>"$OUT/huge.log"
  $B --workload=compact --executor=cpu $(args $v) --json="$OUT/huge.jsonl" >>"$OUT/huge.log" 2>&1
done
for round in $ROUNDS; do
  for v in $SIZES; do
    for variant in old new; do
      echo "== $round $v $variant" >>"$OUT/huge.log"
      bin=$B
      [ $variant = old ] && bin=$B_OLD
      ACCELKV_GPU_ENCODE=device $bin --workload=compact --executor=gpu $(args $v) \
        --json="$OUT/huge.jsonl" >>"$OUT/huge.log" 2>&1
    done
  done
done
python3 - "$OUT/huge.log" "$OUT/huge.jsonl" <<'PY'
import json, sys
tags = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("== ")]
for tag, line in zip(tags, open(sys.argv[2])):
    d = json.loads(line)
    st = d.get("stage_us", {})
    print(tag, d["executor"], round(d["input_gb_per_sec"], 2), d["verified"], "s", round(d["seconds"] * 1e3, 1),
          "read", st.get("read"), "gpu_encode", st.get("gpu_encode"), "write", st.get("write"))
PY
