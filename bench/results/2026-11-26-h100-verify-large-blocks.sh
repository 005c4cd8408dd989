#!/bin/bash
# Large input blocks verified by a thread block each (w18) against w17, in
# memory, on the H100 machine: gpu_test of w18, then two rounds of the
# compact workload (CPU executor with 16 subcompactions, then the GPU
# executor) at 1, 4 and 16 MiB values, each build in turn, then one round at
# 128 B and 4 KiB. Builds: build-cuda (Release, sm_90), stripped into
# .carry/w17 (185aa37's GPU code) and .carry/w18 (w17 plus
# VerifyLargeBlocksKernel and ThreadBlockCrc32c). JSON rows go to
# $OUT/parts.jsonl, each preceded in $OUT/parts.log by "== round build value".
# A and B name the builds (default w17, w18; B's gpu_test runs).
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; uname -r; } >"$OUT/parts.log" 2>&1
.carry/${B:-w18}/gpu_test >"$OUT/gpu_test.log" 2>&1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$OUT/gpu_test.log"
for round in 1 2; do
  for v in 1048576 4194304 16777216 $([ $round = 2 ] && echo 128 4096); do
    for b in ${A:-w17} ${B:-w18}; do
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
