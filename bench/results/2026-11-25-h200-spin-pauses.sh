#!/bin/bash
# Queued writers' initial spin beside 15 busy threads: an experiment build of
# 2cc4e2a whose DBImpl::Writer::Await read its pause count (200 in the code)
# from ACCELKV_SPIN_PAUSES (not committed), stripped into .carry/w3/.
B=.carry/w3/accelkv-bench
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
common=(--key-size=16 --value-size=128 --quiet --stats --json $OUT/w3.jsonl --engine=accelkv
  --engine-opt=accelkv:use_direct_io_for_flush_and_compaction=true --workload=fillrandom
  --stress-cpu=15 --num=20000000 --threads=8)
for v in "force 200" "force 20" "force 1" "off 200" "off 20"; do
  set -- $v
  rm -rf /tmp/w3db
  ACCELKV_SPIN_PAUSES=$2 timeout 150 $B "${common[@]}" --engine-opt=accelkv:gpu_compaction=$1 --db=/tmp/w3db > $OUT/w3-$1-$2.log 2>&1
  echo "== exec=$1 pauses=$2 rc=$?"
  python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readlines()[-1]); print({k: d.get(k) for k in ("ops_per_sec", "seconds", "compaction_wait_sec", "lat_us_p99", "cpu_sec")}); print("\n".join(l for l in d["engine_stats"].split("\n") if l.startswith(("User writes", "Stalls"))))' $OUT/w3.jsonl
done
