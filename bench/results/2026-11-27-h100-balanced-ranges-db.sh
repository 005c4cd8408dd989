#!/bin/bash
# The database without stress (bench/results/2026-11-27-h100-balanced-ranges.md,
# "Database"): fillrandom NUM keys (50M), 16 writers, 16 B keys, 128 B
# values, direct I/O, through bench/results/2026-11-26-h100-large-load.sh
# (part free), build .carry/s7 (ranges balanced by the inputs' indexes).
# Runs: GPU executor (defaults), CPU executor (defaults: one subcompaction),
# CPU executor with max_subcompactions=16 (each job's ranges on 16 threads).
ROOT=$OUT
export CLEAN=1 NUM=${NUM:-50000000} PART=free OUT=$ROOT/db D=.carry/s7
EXEC=force LIMIT=150 TMO=170 TAG=gpu bash bench/results/2026-11-26-h100-large-load.sh
EXEC=off LIMIT=150 TMO=170 TAG=cpu bash bench/results/2026-11-26-h100-large-load.sh
EXEC=off OPTS="max_subcompactions=16" LIMIT=150 TMO=170 TAG=cpu-sub16 \
  bash bench/results/2026-11-26-h100-large-load.sh
cd "$ROOT" && tar czf db.tgz db && rm -rf db
