#!/usr/bin/env bash
# Hunts seed-dependent test failures: runs PROCS copies of one GoogleTest
# binary at once, each repeating FILTER's tests (--gtest_repeat) until
# SECONDS_LIMIT, every test with a fresh seed (test::TestSeed prints each
# as ACCELKV_SEED=N; rerun a failure with that variable set). Writes a line
# per copy to $OUT/summary.txt and, for each copy with a failure, the lines
# before it (the seeds and the failure message) to $OUT/fail-<copy>.log.
#
#   OUT=/tmp/hunt PROCS=16 SECONDS_LIMIT=300 bash scripts/seed_hunt.sh \
#     build-test/tests/gpu_test '*/host:GpuJobChunks*:GpuPlan*:GpuDecode*'
#
# Leave out tests that fork (DBCrashTest): after the first repeat the
# process has helper threads and the fork check fails.
set -euo pipefail
bin=${1:?usage: seed_hunt.sh BINARY [FILTER]}
filter=${2:-*}
out=${OUT:-/tmp/seed-hunt}
procs=${PROCS:-$(nproc)}
limit=${SECONDS_LIMIT:-300}
mkdir -p "$out/logs"
: >"$out/summary.txt"
for i in $(seq 1 "$procs"); do
  timeout "$limit" "$bin" --gtest_filter="$filter" --gtest_repeat=100000 >"$out/logs/$i.log" 2>&1 &
done
wait || true
failed=0
for i in $(seq 1 "$procs"); do
  log=$out/logs/$i.log
  repeats=$(grep -c '^\[  PASSED  \]' "$log" || true)
  fails=$(grep -c '^\[  FAILED  \] .*ms)$' "$log" || true)
  echo "copy $i: $repeats repeats passed whole, $fails failed tests" >>"$out/summary.txt"
  if [ "$fails" -gt 0 ]; then
    failed=1
    grep -B60 -A3 '^\[  FAILED  \] .*ms)$' "$log" | grep -v '^\[       OK \]' | tail -300 >"$out/fail-$i.log"
  fi
done
rm -rf "$out/logs"
cat "$out/summary.txt"
exit "$failed"
