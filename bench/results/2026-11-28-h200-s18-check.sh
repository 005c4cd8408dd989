#!/bin/bash
# Eighteenth session (2026-11-28), H200, call 1: the GPU tests of b40dc3c
# (.carry/s93: the seventeenth session's test mends, never run on a GPU),
# then 8 hash-partitioned instances beside 15 busy threads (8 writers, 400M
# keys asked, 100 s each) with the pinned pool's fix (1a2aaf9): the GPU
# executor on its defaults, the CPU executor with max_subcompactions=16, and,
# if the call has time left, the GPU executor with 16 subcompactions. The
# sixth session's pair (bench/results/2026-11-27-h100-partitions-db.md, before
# the pool's fix) ran the GPU at 535K against 590K.
# bench/results/2026-11-28-h200-s18.md.
ROOT=${OUT:-/tmp/out}
D=${D:-.carry/s93}
T0=$(date +%s)
GPU_TEST_BIN=$D/gpu_test DB_TEST_BIN=$D/db_test BENCH_BIN=none GPU_ALL_PARTS=tests \
  OUT=$ROOT/tests bash scripts/gpu_all.sh 2>&1 | grep -E "PASSED|FAILED|SKIPPED|tests" | tail -12
rm -f "$ROOT/tests/machine.txt"
echo "tests took $(($(date +%s) - T0)) s"
export CLEAN=1 D OUT=$ROOT/db PART=stress PARTS=8 THREADS=8 NUM=400000000 LIMIT=100 TMO=135
S=bench/results/2026-11-26-h100-large-load.sh
EXEC=force bash $S
EXEC=off OPTS=max_subcompactions=16 TAG=sub16 bash $S
if [ $(($(date +%s) - T0)) -lt ${LAST_BY:-430} ]; then
  EXEC=force OPTS=max_subcompactions=16 TAG=sub16 bash $S
fi
echo "call took $(($(date +%s) - T0)) s"
