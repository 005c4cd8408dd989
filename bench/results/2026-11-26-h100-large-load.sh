#!/bin/bash
# The largest loads that fit a 10-minute device call, one executor per part,
# on the H100 machine (build-cuda, Release, sm_90, stripped into .carry/w4/).
# Build: the write batch of Put/Delete kept per thread, the benchmark's value
# bodies prefetched one op ahead. One part per invocation (SAMPLE="T1 T2":
# the off-CPU sampler $D/offcpu.py, committed as
# bench/results/2026-11-26-offcpu.py, from T1 to T2 s into the run):
#   PART=stress  fillrandom NUM keys, THREADS writers (default 8) beside 15 busy
#                threads, one executor (EXEC=force|off), --time-limit LIMIT, timeout TMO
#   PART=free    fillrandom NUM keys, 16 writers, no stress, one executor
#                (EXEC=force|off), --time-limit LIMIT, timeout TMO
#   PART=peer    fillrandom NUM keys with ENGINE=rocksdb|leveldb (its own defaults),
#                THREADS writers beside 15 busy threads, --time-limit LIMIT, timeout TMO
#   PART=tests   gpu_test and the DB tests forced onto the GPU executor
# PARTS=N: N hash-partitioned instances of the engine (--partitions N; the run's
# name gets -pN). STRESS=0: PART=peer without the 15 busy threads.
# OPTS="name=value ...": more accelkv engine options (e.g.
# enable_write_thread_adaptive_yield=false); TAG names the run.
# 16 B keys, 128 B values, direct I/O for flushes and compactions (DIRECT=false:
# buffered table I/O), every write recorded for verification; the JSON lines
# go to $OUT/w4.jsonl. Each run logs MemFree and AnonHugePages before it and 60 s
# into it (later sessions: the rates fell call by call on one start, with process
# CPU rising, bench/results/2026-11-26-h100-io-priority.md); CLEAN=1 first trims the
# disk, drops the page cache and compacts memory (root).
D=${D:-.carry/w4}  # D=.carry/w5: the build with direct writes behind the appender (see the .md)
B=$D/accelkv-bench
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
common=(--key-size=16 --value-size=128 --quiet --stats --json "$OUT/w4.jsonl")
if [ -n "$PARTS" ]; then
  common+=(--partitions="$PARTS")
  TAG="p$PARTS${TAG:+-$TAG}"
fi
accel=(--engine-opt=accelkv:use_direct_io_for_flush_and_compaction="${DIRECT:-true}")
for o in $OPTS; do # OPTS="name=value ...": more accelkv options
  accel+=(--engine-opt=accelkv:"$o")
done
run() { # name timeout args...
  local name=$1 tmo=$2
  shift 2
  rm -rf /tmp/w4db
  if [ -n "$CLEAN" ]; then # CLEAN=1: the disk trimmed, the page cache dropped, memory compacted
    { fstrim -v / || true; sync; echo 3 >/proc/sys/vm/drop_caches; echo 1 >/proc/sys/vm/compact_memory; } >>"$OUT/w4.log" 2>&1
  fi
  grep -E "^(MemFree|AnonHugePages)" /proc/meminfo | tr -s ' ' | paste -sd' ' | sed "s/^/== $name before: /" >>"$OUT/w4.log"
  (sleep 60 && grep -E "^(MemFree|AnonHugePages)" /proc/meminfo | tr -s ' ' | paste -sd' ' | sed "s/^/== $name at 60 s: /" >>"$OUT/w4.log") &
  local t0=$(date +%s)
  timeout "$tmo" $B "$@" "${common[@]}" --db=/tmp/w4db >>"$OUT/w4.log" 2>&1 &
  local pid=$!
  if [ -n "$SAMPLE" ]; then # "t1 t2": per-thread scheduler counters and states
    # The benchmark is timeout's child (pgrep -n once picked a process that
    # was gone by t1). A thread that exits before t2 is not listed: keep t2
    # inside the load.
    local bench=""
    for _ in 1 2 3 4 5; do
      sleep 1
      bench=$(pgrep -P "$pid" -x accelkv-bench | head -1)
      [ -n "$bench" ] && break
    done
    echo "== $name sampling pid ${bench:-none}" >>"$OUT/w4.log"
    python3 $D/offcpu.py "$bench" $SAMPLE >"$OUT/$name.offcpu" 2>&1
  fi
  wait $pid
  local rc=$?
  echo "== $name rc=$rc wall=$(($(date +%s) - t0))s" | tee -a "$OUT/w4.log"
  grep -E "^(accelkv|rocksdb|leveldb) +fillrandom" "$OUT/w4.log" | tail -1
  python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readlines()[-1]); print({k: d.get(k) for k in ("ops", "ops_per_sec", "seconds", "time_limited", "lat_us_p99", "compaction_wait_sec", "cpu_sec", "peak_rss_bytes")}); print("\n".join(l for l in d.get("engine_stats", "").split("\n") if l.startswith(("User writes", "Stalls", "Stall causes", "Executor", "GPU pinned"))))' "$OUT/w4.jsonl"
}
{ nvidia-smi -L; nproc; uname -r; df -h /tmp | tail -1; } >>"$OUT/w4.log" 2>&1
case "${PART:-tests}" in
stress)
  run "stress-$EXEC-$NUM-t${THREADS:-8}${DIRECT:+-direct$DIRECT}${TAG:+-$TAG}" "${TMO:-590}" --engine=accelkv "${accel[@]}" \
    --engine-opt=accelkv:gpu_compaction="$EXEC" --workload=fillrandom --stress-cpu=15 \
    --num="$NUM" --threads="${THREADS:-8}" --time-limit="${LIMIT:-0}"
  ;;
peer)
  run "stress${STRESS:-15}-$ENGINE-$NUM-t${THREADS:-8}${TAG:+-$TAG}" "${TMO:-590}" --engine="$ENGINE" \
    --workload=fillrandom --stress-cpu="${STRESS:-15}" --num="$NUM" --threads="${THREADS:-8}" --time-limit="${LIMIT:-0}"
  ;;
free)
  run "free-$EXEC-$NUM${DIRECT:+-direct$DIRECT}${TAG:+-$TAG}" "${TMO:-590}" --engine=accelkv "${accel[@]}" \
    --engine-opt=accelkv:gpu_compaction="$EXEC" --workload=fillrandom \
    --num="$NUM" --threads=16 --time-limit="${LIMIT:-0}"
  ;;
tests)
  $D/gpu_test 2>&1 | tee "$OUT/gpu_test.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure"
  ACCELKV_TEST_GPU_COMPACTION=force $D/db_test \
    --gtest_filter='Envs/DBModelTest.*:DBCrashTest.*:DBGpuTest.*' 2>&1 |
    tee "$OUT/db_gpu_test.log" | grep -E "^\[  (PASSED|FAILED) |Failure"
  ;;
esac
