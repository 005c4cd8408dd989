#!/bin/bash
# The database under stress with the device table splits (.carry/s1)
# against the last session's final build (fa9e68f: the CPU decides the
# splits and asks the device to re-cut each later table's blocks,
# .carry/t4), and the CPU executor: fillrandom NUM keys (50M), one writer
# beside 15 busy threads, 16 B keys, 128 B values, direct I/O, through
# bench/results/2026-11-26-h100-large-load.sh (part stress). Runs: GPU new,
# CPU executor (new build), GPU base.
# bench/results/2026-11-27-h100-device-splits.md, "Database".
ROOT=$OUT
export CLEAN=1 NUM=${NUM:-50000000} THREADS=1 PART=stress OUT=$ROOT/db
D=.carry/s1 EXEC=force LIMIT=140 TMO=160 TAG=splits bash bench/results/2026-11-26-h100-large-load.sh
D=.carry/s1 EXEC=off LIMIT=220 TMO=240 TAG=cpu bash bench/results/2026-11-26-h100-large-load.sh
D=.carry/t4 EXEC=force LIMIT=140 TMO=160 TAG=base bash bench/results/2026-11-26-h100-large-load.sh
cd "$ROOT" && tar czf db.tgz db && rm -rf db
