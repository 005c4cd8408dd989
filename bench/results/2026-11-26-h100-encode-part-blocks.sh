#!/bin/bash
# Device-encode parts of at least 8 blocks (w17) against w15, at large
# values, in memory, on the H100 machine: gpu_test of w17, then two rounds of
# the compact workload (CPU executor with 16 subcompactions, then the GPU
# executor) at 1, 4 and 16 MiB values, each build in turn. Builds: build-cuda
# (Release, sm_90), stripped into .carry/w15 (b321ca0) and .carry/w17 (w15's
# GPU code plus kMinPartBlocks). JSON rows go to $OUT/parts.jsonl, each
# preceded in $OUT/parts.log by "== round build value".
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; uname -r; } >"$OUT/parts.log" 2>&1
.carry/w17/gpu_test >"$OUT/gpu_test.log" 2>&1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$OUT/gpu_test.log"
for round in 1 2; do
  for v in 1048576 4194304 16777216; do
    for b in w15 w17; do
      echo "== $round $b $v" >>"$OUT/parts.log"
      .carry/$b/accelkv-bench --workload=compact --executor=cpu,gpu --threads=16 \
        --num=$((256000000 * 2 / (3 * (v + 40)))) --key-size=16 --value-size=$v \
        --json="$OUT/parts.jsonl" >>"$OUT/parts.log" 2>&1
      echo "round=$round build=$b value=$v rc=$?"
    done
  done
done
python3 - "$OUT/parts.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    st = d.get("stage_us", {})
    print(d["executor"], d["value_size"], round(d["input_gb_per_sec"], 2), d["verified"],
          "gpu_encode", st.get("gpu_encode"), "verify", st.get("verify"), "read", st.get("read"))
PY
