#!/bin/bash
# Mixed value sizes (--compact-value-size-max): EncodeLargeBlocksKernel over a
# host-built list of the part's blocks of 16 KiB to 1 MiB (new, $B) against
# a grid-stride pass over every block of the part (old, $B_OLD: the same
# source without that change), device-encode mode, in memory, on the H100
# machine: per range LO:HI the CPU executor (16 subcompactions) once, then
# in ROUNDS rounds old and new. JSON rows go to $OUT/list.jsonl, each
# preceded in $OUT/list.log by "== round LO:HI variant".
OUT=${OUT:-/tmp/out}
B=${B:-.carry/w24/accelkv-bench}
B_OLD=${B_OLD:-.carry/w24a/accelkv-bench}
MIXES=${MIXES:-"100:20000 16:65536 16:2097152"}
ROUNDS=${ROUNDS:-"1 2 3"}
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; uname -r; } >"$OUT/list.log" 2>&1
args() { # LO:HI: about 230 MB of input at the mean value size
  local lo=${1%:*} hi=${1#*:}
  echo --threads=16 --num=$((256000000 * 2 / (3 * ((lo + hi) / 2 + 40)))) --key-size=16 \
    --value-size=$lo --compact-value-size-max=$hi
}
for m in $MIXES; do
  echo "== 0 $m cpu" >>"$OUT/list.log"
  $B --workload=compact --executor=cpu $(args $m) --json="$OUT/list.jsonl" >>"$OUT/list.log" 2>&1
done
for round in $ROUNDS; do
  for m in $MIXES; do
    for variant in old new; do
      echo "== $round $m $variant" >>"$OUT/list.log"
      bin=$B
      [ $variant = old ] && bin=$B_OLD
      ACCELKV_GPU_ENCODE=device $bin --workload=compact --executor=gpu $(args $m) \
        --json="$OUT/list.jsonl" >>"$OUT/list.log" 2>&1
    done
  done
done
python3 - "$OUT/list.log" "$OUT/list.jsonl" <<'PY'
import json, sys
tags = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("== ")]
for tag, line in zip(tags, open(sys.argv[2])):
    d = json.loads(line)
    st = d.get("stage_us", {})
    print(tag, d["executor"], round(d["input_gb_per_sec"], 2), d["verified"], "s", round(d["seconds"] * 1e3, 1),
          "read", st.get("read"), "gpu_encode", st.get("gpu_encode"), "write", st.get("write"))
PY
