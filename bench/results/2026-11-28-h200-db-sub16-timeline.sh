#!/bin/bash
# Sixteenth session (2026-11-28), H200: where the GPU executor's time and
# CPU go in the database with max_subcompactions=16 against 1: fillrandom
# NUM keys (30M), one writer beside 15 busy threads, 16 B keys, 128 B
# values, direct I/O, with the device timeline on (ACCELKV_GPU_TIMELINE=1:
# the tl_* marks, summed over the jobs); one run per SUBS value (default
# "1 16", in that order). Calls: 4, D=.carry/s90 (699134b); 5, D=.carry/s91
# (the pinned pool's maps in the stats); 6, D=.carry/s92 (the pool takes a
# region of the size wanted first), SUBS="16 1".
# bench/results/2026-11-28-h200-final-check.md.
ROOT=$OUT
export ACCELKV_GPU_TIMELINE=1
export CLEAN=1 NUM=${NUM:-30000000} THREADS=1 OUT=$ROOT/db D=${D:-.carry/s90}
for sub in ${SUBS:-1 16}; do
  if [ "$sub" = 1 ]; then opts=""; else opts="max_subcompactions=$sub"; fi
  PART=stress EXEC=force OPTS="$opts" LIMIT=80 TMO=95 TAG=gpu-sub$sub-tl \
    bash bench/results/2026-11-26-h100-large-load.sh
done
