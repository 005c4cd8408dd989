#!/bin/bash
# Sixteenth session (2026-11-28), H200: the database under stress with the
# fifteenth session's final code (699134b, .carry/s90): fillrandom NUM keys
# (50M), one writer beside 15 busy threads, 16 B keys, 128 B values, direct
# I/O for flushes and compactions, every write recorded and verified, through
# bench/results/2026-11-26-h100-large-load.sh (parts stress and peer).
# Runs: GPU executor (defaults), CPU executor with max_subcompactions=16,
# CPU executor (defaults: one subcompaction), RocksDB (its defaults; stopped
# at LIMIT_PEER s, so its rate is that of a smaller tree).
# bench/results/2026-11-28-h200-final-check.md.
ROOT=$OUT
export CLEAN=1 NUM=${NUM:-50000000} THREADS=1 OUT=$ROOT/db D=${D:-.carry/s90}
PART=stress EXEC=force LIMIT=150 TMO=170 TAG=gpu bash bench/results/2026-11-26-h100-large-load.sh
PART=stress EXEC=off OPTS="max_subcompactions=16" LIMIT=150 TMO=170 TAG=cpu-sub16 \
  bash bench/results/2026-11-26-h100-large-load.sh
PART=stress EXEC=off LIMIT=140 TMO=160 TAG=cpu bash bench/results/2026-11-26-h100-large-load.sh
PART=peer ENGINE=rocksdb LIMIT=${LIMIT_PEER:-100} TMO=120 bash bench/results/2026-11-26-h100-large-load.sh
