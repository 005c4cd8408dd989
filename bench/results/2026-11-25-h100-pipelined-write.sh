#!/usr/bin/env bash
# Device call: pipelined write A/B (build x). NUM THREADS STRESS ROUNDS EXECS (force|off)
set -u
O=$OUT
for r in $(seq 1 ${ROUNDS:-1}); do for ex in ${EXECS:-force off}; do for pw in ${PWS:-false true}; do
  rm -rf /tmp/xdb
  timeout ${TMO:-240} .carry/x/accelkv-bench --engine=accelkv --engine-opt accelkv:gpu_compaction=$ex \
    --engine-opt accelkv:use_direct_io_for_flush_and_compaction=true --engine-opt accelkv:enable_pipelined_write=$pw \
    --workload=fillrandom --num=$NUM --threads=$THREADS --key-size=16 --value-size=128 --stress-cpu=$STRESS \
    --quiet --db=/tmp/xdb --json=$O/x.jsonl > /dev/null 2>&1
  echo "rc=$? r$r ex=$ex pipelined=$pw threads=$THREADS stress=$STRESS num=$NUM"
  tail -1 $O/x.jsonl | python3 -c "
import json,sys,re
d=json.loads(sys.stdin.read())
print({k:d.get(k) for k in ('ops_per_sec','lat_us_p50','lat_us_p99','lat_us_p999','cpu_sec','seconds','compaction_wait_sec','verified')})
st=d.get('engine_stats','')
for pat in (r'User writes[^\n]*', r'Stalls[^\n]*', r'Executor [^\n]*'):
    for m in re.findall(pat, st): print('  ', m)
"
done; done; done
rm -rf /tmp/xdb
