#!/bin/bash
# The device split's index prefix from the keys (d623fc5, .carry/s5)
# against the build before it (.carry/s4), one device call: the GPU tests
# (gpu_all part tests), the compact A/B at 32 B and 128 B, then the
# database under stress, 50M keys, one writer beside 15 busy threads
# (bench/results/2026-11-26-h100-large-load.sh part stress): the GPU
# executor, then the CPU executor.
# bench/results/2026-11-27-h100-device-splits.md, "Index prefix from the keys".
ROOT=$OUT
mkdir -p "$ROOT/tests" "$ROOT/ab"
GPU_TEST_BIN=.carry/s5/gpu_test DB_TEST_BIN=.carry/s5/db_test BENCH_BIN=.carry/s5/accelkv-bench \
  GPU_ALL_PARTS=tests OUT=$ROOT/tests timeout 240 bash scripts/gpu_all.sh >"$ROOT/tests.log" 2>&1
echo "tests rc=$?"
grep -hE "^\[  (PASSED|FAILED)" "$ROOT"/tests/*.log | head
BUILDS="s4=.carry/s4/accelkv-bench s5=.carry/s5/accelkv-bench" SIZES="32 128" ROUNDS=3 \
  OUT=$ROOT/ab timeout 200 bash bench/ab_compact.sh >"$ROOT/ab.out" 2>&1
echo "ab rc=$?"
cat "$ROOT/ab/ab.md"
export CLEAN=1 NUM=50000000 THREADS=1 PART=stress OUT=$ROOT/db
D=.carry/s5 EXEC=force LIMIT=140 TMO=160 TAG=keys bash bench/results/2026-11-26-h100-large-load.sh
D=.carry/s5 EXEC=off LIMIT=220 TMO=240 TAG=cpu bash bench/results/2026-11-26-h100-large-load.sh
cd "$ROOT" && tar czf all.tgz tests ab db && rm -rf tests ab db
