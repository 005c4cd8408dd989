#!/bin/bash
# The file arena staged on the device piece by piece as it is read (4 MiB
# reads, each copied at once: new, $B) against file by file (old, $B_OLD),
# compact workload in memory, device-encode mode, on the H100 machine: per
# value size the CPU executor (16 subcompactions) once, then in ROUNDS
# rounds old and new. JSON rows go to $OUT/pieces.jsonl, each preceded in
# $OUT/pieces.log by "== round value variant".
OUT=${OUT:-/tmp/out}
B=${B:-.carry/w27/accelkv-bench}
B_OLD=${B_OLD:-.carry/w26/accelkv-bench}
SIZES=${SIZES:-"128 1024 4096"}
ROUNDS=${ROUNDS:-"1 2 3"}
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; uname -r; } >"$OUT/pieces.log" 2>&1
args() { echo --threads=16 --num=$((256000000 * 2 / (3 * ($1 + 40)))) --key-size=16 --value-size=$1; }
for v in $SIZES; do
  echo "== 0 $v cpu" >>"$OUT/pieces.log"
  $B --workload=compact --executor=cpu $(args $v) --json="$OUT/pieces.jsonl" >>"$OUT/pieces.log" 2>&1
done
for round in $ROUNDS; do
  for v in $SIZES; do
    for variant in old new; do
      echo "== $round $v $variant" >>"$OUT/pieces.log"
      bin=$B
      [ $variant = old ] && bin=$B_OLD
      $bin --workload=compact --executor=gpu $(args $v) --json="$OUT/pieces.jsonl" \
        >>"$OUT/pieces.log" 2>&1
    done
  done
done
python3 - "$OUT/pieces.log" "$OUT/pieces.jsonl" <<'PY'
import json, sys
tags = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("== ")]
for tag, line in zip(tags, open(sys.argv[2])):
    d = json.loads(line)
    st = d.get("stage_us", {})
    print(tag, d["executor"], round(d["input_gb_per_sec"], 2), d["verified"], "s", round(d["seconds"] * 1e3, 1),
          "read", st.get("read"), "copy_in_wait", st.get("copy_in_wait"), "gpu_encode", st.get("gpu_encode"),
          "write", st.get("write"))
PY
