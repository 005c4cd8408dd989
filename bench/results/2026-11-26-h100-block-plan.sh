#!/bin/bash
# The block plan on the H100 (bench/results/2026-11-26-h100-block-plan.md),
# one device call with a build carried in D: the GPU tests (gpu_all part
# tests), the compact A/B of one binary with the block plan off and on
# (ACCELKV_GPU_BLOCK_PLAN=0), then the database under stress (NUM keys, one
# writer) off, on, on, off. Call 6 ran it with D=.carry/w36, SIZES="32 128"
# and the database runs on, off. Everything ends up in $OUT/all.tgz.
D=${D:-.carry/w35}
mkdir -p "$OUT/tests" "$OUT/ab" "$OUT/db"
GPU_TEST_BIN=$D/gpu_test DB_TEST_BIN=$D/db_test BENCH_BIN=$D/accelkv-bench GPU_ALL_PARTS=tests \
  OUT=$OUT/tests timeout 200 bash scripts/gpu_all.sh > "$OUT/tests.log" 2>&1
echo "tests rc=$?"; grep -hE "^\[  (PASSED|FAILED)" "$OUT"/tests/*.log | head
BUILDS="off=$D/accelkv-bench:ACCELKV_GPU_BLOCK_PLAN=0 on=$D/accelkv-bench" SIZES="${SIZES:-32 128 1024 4096}" \
  ROUNDS=${ROUNDS:-3} OUT=$OUT/ab timeout 200 bash bench/ab_compact.sh > "$OUT/ab.out" 2>&1
echo "ab rc=$?"; cat "$OUT/ab/ab.md"
ROOT=$OUT
export D CLEAN=1 NUM=${NUM:-50000000} THREADS=1 PART=stress EXEC=force LIMIT=150 TMO=170 OUT=$OUT/db
ACCELKV_GPU_BLOCK_PLAN=0 TAG=off bash bench/results/2026-11-26-h100-large-load.sh
TAG=on bash bench/results/2026-11-26-h100-large-load.sh
TAG=on2 bash bench/results/2026-11-26-h100-large-load.sh
ACCELKV_GPU_BLOCK_PLAN=0 TAG=off2 bash bench/results/2026-11-26-h100-large-load.sh
cd "$ROOT" && tar czf all.tgz ab tests db && rm -rf ab tests db
