#!/bin/bash
# The second pair of bench/results/2026-11-26-h100-tails-db.sh on the same
# machine start, in the other order: CPU executor, then GPU (new build).
ROOT=$OUT
export CLEAN=1 NUM=${NUM:-50000000} THREADS=1 PART=stress OUT=$ROOT/db D=.carry/t2
EXEC=off LIMIT=240 TMO=260 TAG=cpu2 bash bench/results/2026-11-26-h100-large-load.sh
EXEC=force LIMIT=150 TMO=170 TAG=tails2 bash bench/results/2026-11-26-h100-large-load.sh
cd "$ROOT" && tar czf db.tgz db && rm -rf db
