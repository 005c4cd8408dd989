#!/bin/bash
# The B+-tree memtable index on the H100 machine (2eb7d6d, build-cuda,
# Release, sm_90, stripped into .carry/bt/). One part per invocation:
#   PART=one     one writer, 5M keys, no stress: AccelKV with the B+-tree and
#                with the skiplist, LevelDB, RocksDB (Debian's 7.8.3, static)
#   PART=stress  fillrandom NUM keys, 8 writers beside 15 busy threads, one
#                executor (EXEC=force|off), --time-limit LIMIT
#   PART=free    16 writers, no stress, NUM keys, GPU then CPU executor
#   PART=side    NUM keys, 8 writers beside 15 busy threads: GPU executor, CPU
#                executor, RocksDB (--time-limit RLIMIT), GPU executor with
#                enable_pipelined_write (--time-limit PLIMIT); built at 77913d2
#   PART=tests   gpu_test and the DB tests forced onto the GPU executor
# fillrandom, 16 B keys, 128 B values, direct I/O for flushes and compactions.
B=.carry/bt/accelkv-bench
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
common=(--key-size=16 --value-size=128 --quiet --stats --json "$OUT/bt.jsonl")
accel=(--engine-opt=accelkv:use_direct_io_for_flush_and_compaction=true)
run() {  # name timeout args...
  local name=$1 tmo=$2
  shift 2
  rm -rf /tmp/btdb
  local t0=$(date +%s)
  timeout "$tmo" $B "$@" "${common[@]}" --db=/tmp/btdb >>"$OUT/bt.log" 2>&1
  local rc=$?
  echo "== $name rc=$rc wall=$(($(date +%s) - t0))s" | tee -a "$OUT/bt.log"
  grep -E "^(accelkv|rocksdb|leveldb) +fillrandom" "$OUT/bt.log" | tail -1
}
{ nvidia-smi -L; nproc; uname -r; } >>"$OUT/bt.log" 2>&1
case "${PART:-one}" in
one)
  for bt in true false; do
    run "one-accelkv-btree=$bt" 150 --engine=accelkv "${accel[@]}" \
      --engine-opt=accelkv:memtable_btree_index=$bt --engine-opt=accelkv:gpu_compaction=force \
      --workload=fillrandom --num=5000000 --threads=1
  done
  run one-leveldb 150 --engine=leveldb --workload=fillrandom --num=5000000 --threads=1
  run one-rocksdb 150 --engine=rocksdb --workload=fillrandom --num=5000000 --threads=1
  ;;
stress)
  run "stress-$EXEC-$NUM" "${TMO:-590}" --engine=accelkv "${accel[@]}" \
    --engine-opt=accelkv:gpu_compaction="$EXEC" --workload=fillrandom --num="$NUM" --threads=8 \
    --stress-cpu=15 --time-limit="${LIMIT:-0}"
  python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readlines()[-1]); print({k: d[k] for k in ("ops", "ops_per_sec", "seconds", "time_limited", "lat_us_p99", "compaction_wait_sec")}); print(d["engine_stats"])' "$OUT/bt.jsonl"
  ;;
free)  # 16 writers, no stress, NUM keys, both executors
  for e in force off; do
    run "free-$e-$NUM" 200 --engine=accelkv "${accel[@]}" --engine-opt=accelkv:gpu_compaction=$e \
      --workload=fillrandom --num="$NUM" --threads=16
  done
  ;;
side)  # NUM keys, 8 writers beside 15 busy threads: GPU, CPU executor, RocksDB, GPU pipelined
  st=(--workload=fillrandom --num="$NUM" --threads=8 --stress-cpu=15)
  for e in force off; do
    run "side-$e-$NUM" 200 --engine=accelkv "${accel[@]}" --engine-opt=accelkv:gpu_compaction=$e "${st[@]}"
  done
  run "side-rocksdb-$NUM" 200 --engine=rocksdb "${st[@]}" --time-limit="${RLIMIT:-150}"
  run "side-force-pipelined-$NUM" 130 --engine=accelkv "${accel[@]}" --engine-opt=accelkv:gpu_compaction=force \
    --engine-opt=accelkv:enable_pipelined_write=true "${st[@]}" --time-limit="${PLIMIT:-90}"
  ;;
tests)
  .carry/bt/gpu_test 2>&1 | tee "$OUT/gpu_test.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure"
  ACCELKV_TEST_GPU_COMPACTION=force .carry/bt/db_test \
    --gtest_filter='Envs/DBModelTest.*:DBCrashTest.*:DBGpuTest.*' 2>&1 |
    tee "$OUT/db_gpu_test.log" | grep -E "^\[  (PASSED|FAILED) |Failure"
  ;;
esac
