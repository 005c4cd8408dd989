#!/usr/bin/env bash
# The plan stage on the CUDA device and on the host reference device (same
# binary, ACCELKV_GPU_DEVICE=host), 32 and 128 B, and a soak of the split,
# random-job, plan-part and large-table tests with fresh seeds for 200 s
# (bench/results/2026-11-27-h100-balanced-ranges.md, "Call 1").
set -u
B=${B:-.carry/s6}
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; uname -r; which perf; } > "$OUT/machine.txt" 2>&1
for v in 32 128; do
  num=$((256 * 1000000 * 2 / (3 * (v + 40))))
  for r in 1 2 3; do
    echo "== $v cuda $r" >> "$OUT/compact.log"
    "$B/accelkv-bench" --workload=compact --executor=gpu --threads=16 --num=$num --key-size=16 \
      --value-size=$v --json="$OUT/cuda.jsonl" >> "$OUT/compact.log" 2>&1
  done
  echo "== $v host" >> "$OUT/compact.log"
  ACCELKV_GPU_DEVICE=host timeout 120 "$B/accelkv-bench" --workload=compact --executor=gpu --threads=16 \
    --num=$num --key-size=16 --value-size=$v --json="$OUT/host.jsonl" >> "$OUT/compact.log" 2>&1
done
timeout 200 "$B/gpu_test" \
  --gtest_filter='*RandomJobs*:*DeviceSplits*:*SplitDecisions*:GpuSplitTest*:*PlanParts*:*LargeTables*' \
  --gtest_repeat=-1 --gtest_break_on_failure > "$OUT/soak.log" 2>&1
echo "soak rc=$?" >> "$OUT/soak.log"
grep -c "PASSED" "$OUT/soak.log" > "$OUT/soak_summary.txt"
grep -E "FAILED|Failure|ACCELKV_SEED" "$OUT/soak.log" | sort | uniq -c | sort -rn | head -20 >> "$OUT/soak_summary.txt"
tail -c 200000 "$OUT/soak.log" > "$OUT/soak_tail.log"; rm -f "$OUT/soak.log"
