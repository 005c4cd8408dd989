#!/bin/bash
# One engine configuration per run: fillrandom, 16 B keys, 128 B values.
# Args: name stress opts...  Env: NUM THREADS TMO
B=.carry/cw/accelkv-bench
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
NUM=${NUM:-20000000}
run() {
  local name=$1 stress=$2
  shift 2
  rm -rf /tmp/cwdb
  local t0=$(date +%s)
  timeout "${TMO:-170}" $B --engine=accelkv --engine-opt=accelkv:use_direct_io_for_flush_and_compaction=true "$@" \
    --workload=fillrandom --num="$NUM" --threads="${THREADS:-8}" --key-size=16 --value-size=128 \
    --stress-cpu="$stress" --quiet --stats --db=/tmp/cwdb --json "$OUT/$name.json" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "== $name rc=$rc wall=$(( $(date +%s) - t0 ))s"
  grep "^accelkv *fillrandom" "$OUT/$name.log"
  grep -i "stall\|slowdown\|write groups\|batches\|busy" "$OUT/$name.log" | head -8
}
