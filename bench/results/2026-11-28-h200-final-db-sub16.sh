#!/bin/bash
# Sixteenth session (2026-11-28), H200: both executors with the same
# subcompaction setting, so that their trees have the same shape (the
# outputs are byte-identical job for job): fillrandom NUM keys (120M), one
# writer beside 15 busy threads, 16 B keys, 128 B values, direct I/O, every
# write verified, build .carry/s90 (699134b). Runs: the GPU executor with
# max_subcompactions=16, then the CPU executor with max_subcompactions=16.
# bench/results/2026-11-28-h200-final-check.md.
ROOT=$OUT
export CLEAN=1 NUM=${NUM:-120000000} THREADS=1 OUT=$ROOT/db D=${D:-.carry/s90}
PART=stress EXEC=force OPTS="max_subcompactions=16" LIMIT=${LIMIT:-270} TMO=285 TAG=gpu-sub16 \
  bash bench/results/2026-11-26-h100-large-load.sh
PART=stress EXEC=off OPTS="max_subcompactions=16" LIMIT=${LIMIT:-270} TMO=285 TAG=cpu-sub16 \
  bash bench/results/2026-11-26-h100-large-load.sh
