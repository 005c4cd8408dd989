#!/bin/bash
# The database under stress at 120M keys (bench/results/2026-11-27-h100-balanced-ranges.md,
# "Call 6"): fillrandom NUM keys (120M), one writer beside 15 busy threads,
# 16 B keys, 128 B values, direct I/O, through
# bench/results/2026-11-26-h100-large-load.sh (part stress), build .carry/s8.
# Runs: GPU executor (defaults), CPU executor with max_subcompactions=16
# (time-limited, so that both fit one 10-minute call).
ROOT=$OUT
export CLEAN=1 NUM=${NUM:-120000000} THREADS=1 PART=stress OUT=$ROOT/db D=${D:-.carry/s8}
EXEC=force LIMIT=240 TMO=255 TAG=gpu bash bench/results/2026-11-26-h100-large-load.sh
EXEC=off OPTS="max_subcompactions=16" LIMIT=270 TMO=285 TAG=cpu-sub16 \
  bash bench/results/2026-11-26-h100-large-load.sh
cd "$ROOT" && tar czf db.tgz db && rm -rf db
