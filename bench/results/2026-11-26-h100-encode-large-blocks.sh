#!/bin/bash
# Device encode of large values (2026-11-26, fifth session): w11 (0877987,
# a warp per output block copying a byte per lane per step) against w13
# (16-byte unit copies; output blocks of 16 KiB or more a thread block
# each), both with ACCELKV_GPU_ENCODE=device, beside the 16-thread CPU
# executor; w13's keys-only mode (ACCELKV_GPU_ENCODE=cpu) for the
# crossover; 128 B and 1 KiB in the default mode. Builds: build-cuda
# (Release, sm_90, ACCELKV_BUILD_BENCH=ON) stripped into .carry/<build>/.
# The in-memory compact workload: 16-byte keys, 8 L0 + 16 L1 tables,
# tombstones and a snapshot, every output verified against the one-thread
# CPU executor's. Logs and JSON lines under $OUT.
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; lscpu | grep -E "^(Model name|Thread|Core|Socket|CPU\(s\)|L3)"; } >"$OUT/machine.txt" 2>&1
.carry/w13/gpu_test >"$OUT/gpu_test.log" 2>&1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$OUT/gpu_test.log" | head -20
bench() { # build mode value executors
  local num=$((256000000 * 2 / (3 * ($3 + 40))))
  ACCELKV_GPU_ENCODE=$2 .carry/$1/accelkv-bench --workload=compact --executor="$4" --threads=16 \
    --num=$num --key-size=16 --value-size="$3" --json="$OUT/$1-$2.jsonl" >>"$OUT/bench.log" 2>&1
}
for r in 1 2 3; do
  ds="w11 w13"
  [ $((r % 2)) = 0 ] && ds="w13 w11"
  for v in 4096 16384 65536 262144 1048576; do
    for d in $ds; do bench "$d" device "$v" cpu,gpu; done
    bench w13 cpu "$v" gpu
  done
  for v in 128 1024; do
    for d in $ds; do bench "$d" default "$v" cpu,gpu; done
  done
done
grep -E "compact" "$OUT/bench.log" | tail -5
