#!/usr/bin/env bash
# Device call: writers under stress: 1 vs 8 writers, and spinning on mu_ (ACCELKV_WRITE_LOCK_SPIN). Build y.
set -u
O=$OUT
run() {  # threads spin exec
  rm -rf /tmp/ydb
  ACCELKV_WRITE_LOCK_SPIN=$2 timeout 200 .carry/y/accelkv-bench --engine=accelkv --engine-opt accelkv:gpu_compaction=$3 \
    --engine-opt accelkv:use_direct_io_for_flush_and_compaction=true \
    --workload=fillrandom --num=${NUM:-10000000} --threads=$1 --key-size=16 --value-size=128 --stress-cpu=15 \
    --quiet --db=/tmp/ydb --json=$O/y.jsonl > /dev/null 2>&1
  echo "rc=$? threads=$1 spin=$2 exec=$3"
  tail -1 $O/y.jsonl | python3 -c "
import json,sys,re
d=json.loads(sys.stdin.read())
print({k:d.get(k) for k in ('ops_per_sec','lat_us_p50','lat_us_p99','cpu_sec','seconds','verified')})
st=d.get('engine_stats','')
for pat in (r'User writes[^\n]*', r'Stalls[^\n]*'):
    for m in re.findall(pat, st): print('  ', m)
"
}
for r in 1 2; do
  run 8 0 force; run 8 200 force; run 1 0 force; run 8 2000 force
done
rm -rf /tmp/ydb
