#!/usr/bin/env bash
# Device call: pipelined write with combining (build y = this change) vs classic, under stress.
set -u
O=$OUT
run() {  # threads pipelined exec stress num
  rm -rf /tmp/ydb
  timeout 200 .carry/y/accelkv-bench --engine=accelkv --engine-opt accelkv:gpu_compaction=$3 \
    --engine-opt accelkv:use_direct_io_for_flush_and_compaction=true --engine-opt accelkv:enable_pipelined_write=$2 \
    --workload=fillrandom --num=$5 --threads=$1 --key-size=16 --value-size=128 --stress-cpu=$4 \
    --quiet --db=/tmp/ydb --json=$O/p.jsonl > /dev/null 2>&1
  echo "rc=$? threads=$1 pipelined=$2 exec=$3 stress=$4 num=$5"
  tail -1 $O/p.jsonl | python3 -c "
import json,sys,re
d=json.loads(sys.stdin.read())
print({k:d.get(k) for k in ('ops_per_sec','lat_us_p50','lat_us_p99','cpu_sec','seconds','verified')})
st=d.get('engine_stats','')
for pat in (r'User writes[^\n]*', r'Stalls[^\n]*'):
    for m in re.findall(pat, st): print('  ', m)
"
}
for r in 1 2; do
  run 8 false force 15 10000000; run 8 true force 15 10000000
done
run 8 true off 15 10000000; run 8 false off 15 10000000
run 16 false force 0 10000000; run 16 true force 0 10000000
run 4 false force 0 10000000; run 4 true force 0 10000000
rm -rf /tmp/ydb
