#!/bin/bash
# The database under stress with the tenth session's build (tables encoded
# whole on the device, keys-only mode through the plan: .carry/t2) against
# the session's starting build (26e9795: .carry/b1), and the CPU executor:
# fillrandom NUM keys (50M), one writer beside 15 busy threads, 16 B keys,
# 128 B values, direct I/O, through bench/results/2026-11-26-h100-large-load.sh
# (part stress). Runs: GPU new, CPU executor (new build), GPU base.
# bench/results/2026-11-26-h100-device-tails.md, "Database".
ROOT=$OUT
export CLEAN=1 NUM=${NUM:-50000000} THREADS=1 PART=stress OUT=$ROOT/db
D=.carry/t2 EXEC=force LIMIT=150 TMO=170 TAG=tails bash bench/results/2026-11-26-h100-large-load.sh
D=.carry/t2 EXEC=off LIMIT=240 TMO=260 TAG=cpu bash bench/results/2026-11-26-h100-large-load.sh
D=.carry/b1 EXEC=force LIMIT=150 TMO=170 TAG=base bash bench/results/2026-11-26-h100-large-load.sh
cd "$ROOT" && tar czf db.tgz db && rm -rf db
