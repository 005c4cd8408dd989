#!/bin/bash
# The device table splits' final build (.carry/s3) at the issue's database
# scale, and more compact rounds at the small sizes: PART=ab runs gpu_test,
# the compact A/B against the last session's final build (fa9e68f,
# .carry/t4) at 32 B and 128 B (ROUNDS=5), then the GPU executor over fillrandom 120M keys, one
# writer beside 15 busy threads, 16 B keys, 128 B values, direct I/O
# (bench/results/2026-11-26-h100-large-load.sh part stress); PART=cpu the
# CPU executor over the same load (its own device call: it takes most of
# one). bench/results/2026-11-27-h100-device-splits.md.
ROOT=$OUT
if [ "${PART:-ab}" = ab ]; then
  mkdir -p "$ROOT/ab"
  .carry/s3/gpu_test >"$ROOT/ab/gpu_test.log" 2>&1
  echo "gpu_test rc=$?"
  grep -E "^\[  (PASSED|FAILED)" "$ROOT/ab/gpu_test.log"
  BUILDS="base=.carry/t4/accelkv-bench splits=.carry/s3/accelkv-bench" SIZES="32 128" ROUNDS=5 \
    OUT=$ROOT/ab timeout 200 bash bench/ab_compact.sh >"$ROOT/ab.out" 2>&1
  echo "ab rc=$?"
  cat "$ROOT/ab/ab.md"
  export CLEAN=1 NUM=120000000 THREADS=1 PART=stress OUT=$ROOT/db D=.carry/s3
  EXEC=force LIMIT=330 TMO=360 TAG=splits bash bench/results/2026-11-26-h100-large-load.sh
else
  export CLEAN=1 NUM=120000000 THREADS=1 PART=stress OUT=$ROOT/db D=.carry/s3
  EXEC=off LIMIT=530 TMO=585 TAG=cpu bash bench/results/2026-11-26-h100-large-load.sh
fi
cd "$ROOT" && tar czf all.tgz ./*/ && rm -rf db ab
