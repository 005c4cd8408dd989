#!/bin/bash
# Small values after the large-block verify (w18) against w17: three rounds at
# 128 B and two at 32 B, the builds alternating, in memory, on the H100
# machine (same builds as 2026-11-26-h100-verify-large-blocks.sh). JSON rows
# go to $OUT/small.jsonl. A and B name the builds (default w17, w18).
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; uname -r; } >"$OUT/small.log" 2>&1
for round in 1 2 3; do
  for v in 128 $([ $round -le 2 ] && echo 32); do
    for b in ${A:-w17} ${B:-w18}; do
      echo "== $round $b $v" >>"$OUT/small.log"
      .carry/$b/accelkv-bench --workload=compact --executor=gpu --threads=16 \
        --num=$((256000000 * 2 / (3 * (v + 40)))) --key-size=16 --value-size=$v \
        --json="$OUT/small.jsonl" >>"$OUT/small.log" 2>&1
      echo "round=$round build=$b value=$v rc=$?"
    done
  done
done
python3 - "$OUT/small.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    st = d.get("stage_us", {})
    print(d["executor"], d["value_size"], round(d["input_gb_per_sec"], 2), d["verified"],
          "verify", st.get("verify"), "verify_overlap", st.get("verify_overlap"))
PY
