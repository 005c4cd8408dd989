#!/usr/bin/env bash
# Device call: chunked (range-pipelined) whole jobs at 1 and 4 KiB, in memory. Build x.
set -u
O=$OUT
B=.carry/x/accelkv-bench
for r in 1 2 3; do for v in 4096 1024; do
  num=$(( 256 * 1000000 * 2 / (3 * (v + 40)) ))
  $B --workload=compact --executor=cpu --threads=16 --num=$num --key-size=16 --value-size=$v \
     --json=$O/c.jsonl 2>&1 | grep -E "^cpu " | sed "s/^/r$r v$v none: /"
  for L in 0 600000000 400000000 300000000 220000000; do
    if [ $L = 0 ]; then unset ACCELKV_GPU_MEMORY_LIMIT; else export ACCELKV_GPU_MEMORY_LIMIT=$L; fi
    $B --workload=compact --executor=gpu --threads=16 --num=$num --key-size=16 --value-size=$v \
       --json=$O/c.jsonl 2>&1 | grep -E "^gpu |FAILED|skipped|rror" | sed "s/^/r$r v$v L$L: /"
    tail -1 $O/c.jsonl | python3 -c "
import json,sys
d=json.loads(sys.stdin.read())
print('   chunks',d.get('gpu_chunks'),'s',d.get('seconds'),'gbps',d.get('input_gb_per_sec'),'cpu',d.get('cpu_sec'),'ok',d.get('verified'), {k:round(v/1000,1) for k,v in (d.get('stage_us') or {}).items()})"
  done
  unset ACCELKV_GPU_MEMORY_LIMIT
done; done
