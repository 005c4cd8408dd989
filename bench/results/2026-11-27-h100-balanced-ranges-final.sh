#!/bin/bash
# The final build of the session (0fde7b8: index offsets scaled to the
# file's size, no cut closing a range under half an even share) on the GPU
# machine (bench/results/2026-11-27-h100-balanced-ranges.md, "Call 7"): the
# GPU tests (gpu_all part tests), then one round of the compact A/B against
# 0ba142c (.carry/s7) at 32 B to 4 KiB. Everything ends up in $OUT/all.tgz.
D=${D:-.carry/s9}
B=${B:-.carry/s7}
mkdir -p "$OUT/tests" "$OUT/ab"
GPU_TEST_BIN=$D/gpu_test DB_TEST_BIN=$D/db_test BENCH_BIN=$D/accelkv-bench GPU_ALL_PARTS=tests \
  OUT=$OUT/tests timeout 240 bash scripts/gpu_all.sh >"$OUT/tests.log" 2>&1
echo "tests rc=$?"
grep -hE "^\[  (PASSED|FAILED)" "$OUT"/tests/*.log | head
BUILDS="final=$D/accelkv-bench s7=$B/accelkv-bench" SIZES="${SIZES:-32 128 1024 4096}" \
  ROUNDS=${ROUNDS:-1} OUT=$OUT/ab timeout 200 bash bench/ab_compact.sh >"$OUT/ab.out" 2>&1
echo "ab rc=$?"
cat "$OUT/ab/ab.md"
cd "$OUT" && tar czf all.tgz ab tests && rm -rf ab tests
