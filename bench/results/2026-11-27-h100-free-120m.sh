#!/bin/bash
# The database without stress at 120M keys, the largest load of the issue's
# targets' earlier runs (bench/results/2026-11-27-h100-free-120m.md):
# fillrandom NUM keys (120M), 16 writers, 16 B keys, 128 B values, direct
# I/O, through bench/results/2026-11-26-h100-large-load.sh (part free),
# build D (.carry/s12). One pair per call, both on the same machine start:
#   PAIR=default  GPU executor, then the CPU executor with its defaults (one
#                 subcompaction per job, as RocksDB)
#   PAIR=sub16    GPU executor, then the CPU executor with max_subcompactions=16
# Each run is time-limited (GLIMIT s for the GPU run, CLIMIT for the CPU
# run; default 250 and 275), so that a pair fits one 10-minute call: a run
# that does not finish reports its rate over the keys it loaded.
ROOT=$OUT
export CLEAN=1 NUM=${NUM:-120000000} PART=free OUT=$ROOT/db D=${D:-.carry/s12}
G=${GLIMIT:-250}
C=${CLIMIT:-275}
EXEC=force LIMIT=$G TMO=$((G + 15)) TAG=gpu bash bench/results/2026-11-26-h100-large-load.sh
if [ "${PAIR:-default}" = sub16 ]; then
  EXEC=off OPTS="max_subcompactions=16" LIMIT=$C TMO=$((C + 15)) TAG=cpu-sub16 \
    bash bench/results/2026-11-26-h100-large-load.sh
else
  EXEC=off LIMIT=$C TMO=$((C + 15)) TAG=cpu bash bench/results/2026-11-26-h100-large-load.sh
fi
cd "$ROOT" && tar czf db.tgz db && rm -rf db
