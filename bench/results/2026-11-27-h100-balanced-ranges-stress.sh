#!/bin/bash
# The database under stress (bench/results/2026-11-27-h100-balanced-ranges.md,
# "Database"): fillrandom NUM keys (50M), one writer beside 15 busy threads,
# 16 B keys, 128 B values, direct I/O, through
# bench/results/2026-11-26-h100-large-load.sh (part stress), build .carry/s8
# (s7 with the busy threads' CPU reported: stress_cpu_sec).
# Runs: GPU executor (defaults), CPU executor with max_subcompactions=16,
# CPU executor (defaults: one subcompaction).
ROOT=$OUT
export CLEAN=1 NUM=${NUM:-50000000} THREADS=1 PART=stress OUT=$ROOT/db D=${D:-.carry/s8}
EXEC=force LIMIT=150 TMO=170 TAG=gpu bash bench/results/2026-11-26-h100-large-load.sh
EXEC=off OPTS="max_subcompactions=16" LIMIT=150 TMO=170 TAG=cpu-sub16 \
  bash bench/results/2026-11-26-h100-large-load.sh
EXEC=off LIMIT=150 TMO=170 TAG=cpu bash bench/results/2026-11-26-h100-large-load.sh
cd "$ROOT" && tar czf db.tgz db && rm -rf db
