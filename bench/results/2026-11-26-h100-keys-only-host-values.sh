#!/bin/bash
# Keys-only mode with the values kept on the host (the CPU checks the
# checksums, the device gets only the blocks' keys and end offsets;
# bench/results/2026-11-26-h100-keys-only-host-values.md),
# one device call with the new build in D (call 5: .carry/t3, dbc12ea; call 6:
# .carry/t4, fa9e68f) and the previous one (83d8b70:
# keys-only through the plan, values staged for the device's checksums) in
# P: the GPU tests (gpu_all part tests), then the compact A/B of keys-only
# mode forced in both builds beside device-encode mode in the new one.
# Everything ends up in $OUT/all.tgz.
D=${D:-.carry/t4}
P=${P:-.carry/t2}
mkdir -p "$OUT/tests" "$OUT/ab"
GPU_TEST_BIN=$D/gpu_test DB_TEST_BIN=$D/db_test BENCH_BIN=$D/accelkv-bench GPU_ALL_PARTS=tests \
  OUT=$OUT/tests timeout 240 bash scripts/gpu_all.sh > "$OUT/tests.log" 2>&1
echo "tests rc=$?"; grep -hE "^\[  (PASSED|FAILED)" "$OUT"/tests/*.log | head
BUILDS="ko_plan=$P/accelkv-bench:ACCELKV_GPU_ENCODE=cpu ko_host=$D/accelkv-bench:ACCELKV_GPU_ENCODE=cpu dev=$D/accelkv-bench:ACCELKV_GPU_ENCODE=device" \
  SIZES="${SIZES:-4096 1048576 16777216}" ROUNDS=${ROUNDS:-3} OUT=$OUT/ab timeout 300 bash bench/ab_compact.sh > "$OUT/ab.out" 2>&1
echo "ab rc=$?"; cat "$OUT/ab/ab.md"
cd "$OUT" && tar czf all.tgz ab tests && rm -rf ab tests
