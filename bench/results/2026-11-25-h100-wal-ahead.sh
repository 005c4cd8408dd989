#!/bin/bash
# The WAL's windows mapped ahead by a helper thread and the benchmark's key
# state prefetched one op ahead, on the H100 machine (build-cuda, Release,
# sm_90, stripped into .carry/w2/). One part per invocation:
#   PART=stress  fillrandom NUM keys, 8 writers beside 15 busy threads, one
#                executor (EXEC=force|off), --time-limit LIMIT
#   PART=probe   20M keys, 8 writers beside 15 busy threads, GPU executor:
#                defaults, then write_thread_max_yield_usec=0; then one
#                writer, 8M keys; per-thread scheduler counters
#                (/proc/PID/task/*/schedstat, sample.py) for the first
#   PART=side    NUM keys, 8 writers beside 15 busy threads: GPU executor, CPU
#                executor, RocksDB 7.8.3 (--time-limit RLIMIT)
#   PART=free    16 writers, no stress, NUM keys, GPU then CPU executor
#   PART=tests   gpu_test and the DB tests forced onto the GPU executor
# fillrandom, 16 B keys, 128 B values, direct I/O for flushes and compactions.
D=.carry/w2
B=$D/accelkv-bench
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
common=(--key-size=16 --value-size=128 --quiet --stats --json "$OUT/w2.jsonl")
accel=(--engine-opt=accelkv:use_direct_io_for_flush_and_compaction=true)
run() {  # name timeout args...
  local name=$1 tmo=$2
  shift 2
  rm -rf /tmp/w2db
  local t0=$(date +%s)
  timeout "$tmo" $B "$@" "${common[@]}" --db=/tmp/w2db >>"$OUT/w2.log" 2>&1 &
  local pid=$!
  if [ -n "$SAMPLE" ]; then
    sleep 1
    python3 $D/sample.py "$(pgrep -n accelkv-bench)" 15 35 >"$OUT/$name.sched" 2>&1
  fi
  wait $pid
  local rc=$?
  echo "== $name rc=$rc wall=$(($(date +%s) - t0))s" | tee -a "$OUT/w2.log"
  grep -E "^(accelkv|rocksdb|leveldb) +fillrandom" "$OUT/w2.log" | tail -1
  python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readlines()[-1]); print({k: d.get(k) for k in ("ops", "ops_per_sec", "seconds", "time_limited", "lat_us_p99", "compaction_wait_sec", "cpu_sec")}); print("\n".join(l for l in d["engine_stats"].split("\n") if l.startswith(("User writes", "Stalls", "Executor"))))' "$OUT/w2.jsonl"
}
{ nvidia-smi -L; nproc; uname -r; } >>"$OUT/w2.log" 2>&1
st=(--workload=fillrandom --stress-cpu=15)
case "${PART:-probe}" in
stress)
  run "stress-$EXEC-$NUM" "${TMO:-590}" --engine=accelkv "${accel[@]}" \
    --engine-opt=accelkv:gpu_compaction="$EXEC" "${st[@]}" --num="$NUM" --threads=8 \
    --time-limit="${LIMIT:-0}"
  ;;
probe)
  g=(--engine=accelkv "${accel[@]}" --engine-opt=accelkv:gpu_compaction=force "${st[@]}")
  SAMPLE=1 run probe-8w-default 150 "${g[@]}" --num=20000000 --threads=8
  run probe-8w-noyield 150 "${g[@]}" --num=20000000 --threads=8 \
    --engine-opt=accelkv:write_thread_max_yield_usec=0
  run probe-1w 150 "${g[@]}" --num=8000000 --threads=1
  ;;
side)
  for e in force off; do
    run "side-$e-$NUM" 200 --engine=accelkv "${accel[@]}" --engine-opt=accelkv:gpu_compaction=$e \
      "${st[@]}" --num="$NUM" --threads=8
  done
  run "side-rocksdb-$NUM" 200 --engine=rocksdb "${st[@]}" --num="$NUM" --threads=8 \
    --time-limit="${RLIMIT:-140}"
  ;;
free)
  for e in force off; do
    run "free-$e-$NUM" 200 --engine=accelkv "${accel[@]}" --engine-opt=accelkv:gpu_compaction=$e \
      --workload=fillrandom --num="$NUM" --threads=16
  done
  ;;
tests)
  $D/gpu_test 2>&1 | tee "$OUT/gpu_test.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure"
  ACCELKV_TEST_GPU_COMPACTION=force $D/db_test \
    --gtest_filter='Envs/DBModelTest.*:DBCrashTest.*:DBGpuTest.*' 2>&1 |
    tee "$OUT/db_gpu_test.log" | grep -E "^\[  (PASSED|FAILED) |Failure"
  ;;
esac
