#!/bin/bash
# The device table splits with the first round over BlockRuns' records
# (.carry/s2) in one device call: the GPU tests and the compact A/B against
# the last session's final build (fa9e68f, .carry/t4) through
# bench/results/2026-11-27-h100-device-splits.sh, then the database under
# stress (50M keys, one writer beside 15 busy threads, 16 B keys, 128 B
# values, direct I/O; bench/results/2026-11-26-h100-large-load.sh part
# stress): GPU executor, then the CPU executor.
# bench/results/2026-11-27-h100-device-splits.md.
ROOT=$OUT
D=.carry/s2 B=.carry/t4 OUT=$ROOT bash bench/results/2026-11-27-h100-device-splits.sh
export CLEAN=1 NUM=${NUM:-50000000} THREADS=1 PART=stress OUT=$ROOT/db
D=.carry/s2 EXEC=force LIMIT=140 TMO=160 TAG=runs bash bench/results/2026-11-26-h100-large-load.sh
D=.carry/s2 EXEC=off LIMIT=220 TMO=240 TAG=cpu bash bench/results/2026-11-26-h100-large-load.sh
cd "$ROOT" && tar czf db.tgz db && rm -rf db
