#!/bin/bash
# BlockRuns' temporaries freed on return (.carry/s4) against the build
# before (.carry/s3, daa4b87), one device call: the GPU tests (gpu_all part
# tests), the compact A/B at 32 B and 128 B, and the GPU executor over the
# database under stress (50M keys, one writer beside 15 busy threads;
# bench/results/2026-11-26-h100-large-load.sh part stress).
# bench/results/2026-11-27-h100-device-splits.md, "BlockRuns' temporaries".
ROOT=$OUT
mkdir -p "$ROOT/tests" "$ROOT/ab"
GPU_TEST_BIN=.carry/s4/gpu_test DB_TEST_BIN=.carry/s4/db_test BENCH_BIN=.carry/s4/accelkv-bench \
  GPU_ALL_PARTS=tests OUT=$ROOT/tests timeout 240 bash scripts/gpu_all.sh >"$ROOT/tests.log" 2>&1
echo "tests rc=$?"
grep -hE "^\[  (PASSED|FAILED)" "$ROOT"/tests/*.log | head
BUILDS="s3=.carry/s3/accelkv-bench s4=.carry/s4/accelkv-bench" SIZES="32 128" ROUNDS=3 \
  OUT=$ROOT/ab timeout 200 bash bench/ab_compact.sh >"$ROOT/ab.out" 2>&1
echo "ab rc=$?"
cat "$ROOT/ab/ab.md"
export CLEAN=1 NUM=50000000 THREADS=1 PART=stress OUT=$ROOT/db
D=.carry/s4 EXEC=force LIMIT=140 TMO=160 TAG=temps bash bench/results/2026-11-26-h100-large-load.sh
cd "$ROOT" && tar czf all.tgz tests ab db && rm -rf tests ab db
