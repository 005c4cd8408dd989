#!/bin/bash
# Sixteenth session (2026-11-28), H200: the fifteenth session's final code
# (699134b, .carry/s90) checked where it had not run. PART (comma-separated):
#   tests  gpu_test and the database tests forced onto the GPU (s90)
#   ab     the compact A/B against ca74d43 (.carry/s83), SIZES (default
#          "4096 1024 128 32"), ROUNDS (default 3), page-locked lent files
#   disk   end to end from disk (scripts/gpu_all.sh part disk): cold, the
#          inputs dropped from the page cache and read with O_DIRECT, then
#          warm, the inputs left in the cache; DISK_VALUES (default "128 1024 4096")
# Logs under $OUT. bench/results/2026-11-28-h200-final-check.md.
B=${B:-.carry/s90}
PREV=${PREV:-.carry/s83}
OUT=${OUT:-/tmp/out}
PART=${PART:-tests,ab,disk}
want() { [[ ",$PART," == *",$1,"* ]]; }
P=--compact-pinned-mem=true
if want tests; then
  GPU_TEST_BIN=$B/gpu_test DB_TEST_BIN=$B/db_test BENCH_BIN=none GPU_ALL_PARTS=tests \
    OUT=$OUT/tests bash scripts/gpu_all.sh 2>&1 | grep -E "PASSED|FAILED|SKIPPED|tests" | tail -12
  rm -f "$OUT/tests/machine.txt"
fi
if want ab; then
  BUILDS="prev=$PREV/accelkv-bench:$P head=$B/accelkv-bench:$P ${EXTRA_BUILDS:-}" \
    SIZES="${SIZES:-4096 1024 128 32}" ROUNDS=${ROUNDS:-3} OUT=$OUT/ab bash bench/ab_compact.sh >/dev/null 2>&1
  echo "ab rc=$?"
  cat "$OUT/ab/ab.md"
  rm -f "$OUT/ab/ab.log" "$OUT/ab/ab.jsonl"
fi
if want disk; then
  for mode in cold warm; do
    if [ $mode = cold ]; then
      A="--compact-direct-writes=true --compact-direct-reads=true"
    else
      A="--compact-direct-writes=true --compact-drop-cache=false"
    fi
    OUT=$OUT/disk-$mode BENCH_BIN=$B/accelkv-bench GPU_ALL_PARTS=disk GPU_DISK_DIR=$PWD/.diskbench \
      GPU_DISK_VALUES="${DISK_VALUES:-128 1024 4096}" GPU_DISK_ARGS="$A" bash scripts/gpu_all.sh 2>&1 |
      grep -E "^dd|^\| |^(cpu|gpu) " | head -30
    rm -f "$OUT/disk-$mode/disk.log"
  done
fi
