#!/bin/bash
# The output-table splits on the device (docs/GPU.md, "Table splits";
# bench/results/2026-11-27-h100-device-splits.md), one device call with the
# new build carried in D and the last session's final build (fa9e68f, the
# CPU deciding the splits, replans on the device) in B: the GPU tests
# (gpu_all part tests: gpu_test and the database tests with every
# compaction forced onto the GPU), then the compact A/B of the two builds
# (ABBA rounds). Everything ends up in $OUT/all.tgz.
D=${D:-.carry/s1}
B=${B:-.carry/t4}
mkdir -p "$OUT/tests" "$OUT/ab"
GPU_TEST_BIN=$D/gpu_test DB_TEST_BIN=$D/db_test BENCH_BIN=$D/accelkv-bench GPU_ALL_PARTS=tests \
  OUT=$OUT/tests timeout 240 bash scripts/gpu_all.sh >"$OUT/tests.log" 2>&1
echo "tests rc=$?"
grep -hE "^\[  (PASSED|FAILED)" "$OUT"/tests/*.log | head
BUILDS="base=$B/accelkv-bench splits=$D/accelkv-bench" SIZES="${SIZES:-32 128 1024 4096}" \
  ROUNDS=${ROUNDS:-3} OUT=$OUT/ab timeout 300 bash bench/ab_compact.sh >"$OUT/ab.out" 2>&1
echo "ab rc=$?"
cat "$OUT/ab/ab.md"
cd "$OUT" && tar czf all.tgz ab tests && rm -rf ab tests
