#!/bin/bash
# The tenth session's final build (.carry/t4, fa9e68f) at the issue's
# database scale: fillrandom 120M keys, one writer beside 15 busy threads,
# 16 B keys, 128 B values, direct I/O (bench/results/2026-11-26-h100-large-load.sh
# part stress). EXEC=force (the GPU executor) or off (the CPU executor),
# one per device call (the CPU executor's load takes most of a call).
# bench/results/2026-11-26-h100-final-120m.md.
ROOT=$OUT
export CLEAN=1 NUM=120000000 THREADS=1 PART=stress OUT=$ROOT/db D=.carry/t4
if [ "${EXEC:-force}" = force ]; then
  EXEC=force LIMIT=400 TMO=440 TAG=final bash bench/results/2026-11-26-h100-large-load.sh
else
  EXEC=off LIMIT=530 TMO=585 TAG=final bash bench/results/2026-11-26-h100-large-load.sh
fi
cd "$ROOT" && tar czf db.tgz db && rm -rf db
