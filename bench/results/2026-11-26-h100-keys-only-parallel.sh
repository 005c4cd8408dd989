#!/bin/bash
# Keys-only mode with the subcompaction ranges assembled in parallel
# (output_assembler.cc) against device-encode mode, in memory, on the H100
# machine. Per value size: the CPU executor (16 subcompactions) once; then,
# in two rounds, the GPU executor with ACCELKV_GPU_ENCODE=device, =cpu
# (keys-only, this build) and =cpu with the previous build (keys-only on
# one thread, $B_OLD). SIZES, VARIANTS and ROUNDS choose; CPU_ROUNDS=1
# runs the CPU executor in every round. JSON rows go to $OUT/ko.jsonl, each preceded in
# $OUT/ko.log by "== round value variant".
OUT=${OUT:-/tmp/out}
B=${B:-.carry/w22/accelkv-bench}
B_OLD=${B_OLD:-.carry/w21/accelkv-bench}
SIZES=${SIZES:-"1024 4096 16384 65536 262144 1048576"}
VARIANTS=${VARIANTS:-"device keys-only keys-only-old"}
ROUNDS=${ROUNDS:-"1 2"}
CPU_ROUNDS=${CPU_ROUNDS:-0}  # 1: the CPU executor in every round instead of once before
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; uname -r; } >"$OUT/ko.log" 2>&1
args() { echo --threads=16 --num=$((256000000 * 2 / (3 * ($1 + 40)))) --key-size=16 --value-size=$1; }
cpu() {
  echo "== $1 $2 cpu" >>"$OUT/ko.log"
  $B --workload=compact --executor=cpu $(args $2) --json="$OUT/ko.jsonl" >>"$OUT/ko.log" 2>&1
}
if [ "$CPU_ROUNDS" = 0 ]; then for v in $SIZES; do cpu 0 $v; done; fi
for round in $ROUNDS; do
  for v in $SIZES; do
    [ "$CPU_ROUNDS" = 1 ] && cpu $round $v
    for variant in $VARIANTS; do
      echo "== $round $v $variant" >>"$OUT/ko.log"
      bin=$B mode=cpu
      [ $variant = device ] && mode=device
      [ $variant = keys-only-old ] && bin=$B_OLD
      ACCELKV_GPU_ENCODE=$mode $bin --workload=compact --executor=gpu $(args $v) \
        --json="$OUT/ko.jsonl" >>"$OUT/ko.log" 2>&1
    done
  done
done
python3 - "$OUT/ko.log" "$OUT/ko.jsonl" <<'PY'
import json, sys
tags = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("== ")]
for tag, line in zip(tags, open(sys.argv[2])):
    d = json.loads(line)
    st = d.get("stage_us", {})
    print(tag, d["executor"], round(d["input_gb_per_sec"], 2), d["verified"], "s", round(d["seconds"] * 1e3, 1),
          "read", st.get("read"), "encode", st.get("encode"), "gpu_encode", st.get("gpu_encode"),
          "write", st.get("write"), "cpu_s", round(d.get("cpu_sec", 0), 3))
PY
