#!/bin/bash
# Eighteenth session (2026-11-28), H200, call 3: the 120M-key pair of
# bench/results/2026-11-28-h200-final-db-sub16.sh again, in the other order
# (the CPU executor first), then RocksDB beside the same 15 busy threads,
# time-limited (it does not load 120M keys in a call). Build .carry/s93
# (b40dc3c; its accelkv-bench is 1a2aaf9's, with the pinned pool's fix).
# bench/results/2026-11-28-h200-s18.md.
ROOT=$OUT
export CLEAN=1 NUM=${NUM:-120000000} THREADS=1 OUT=$ROOT/db D=${D:-.carry/s93}
S=bench/results/2026-11-26-h100-large-load.sh
PART=stress EXEC=off OPTS="max_subcompactions=16" LIMIT=${LIMIT:-265} TMO=285 TAG=cpu-sub16 bash $S
PART=stress EXEC=force OPTS="max_subcompactions=16" LIMIT=${LIMIT:-265} TMO=285 TAG=gpu-sub16 bash $S
PART=peer ENGINE=rocksdb LIMIT=${PEER_LIMIT:-80} TMO=100 bash $S
