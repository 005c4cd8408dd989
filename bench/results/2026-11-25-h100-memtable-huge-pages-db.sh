#!/usr/bin/env bash
# Device call: DB level, one engine config: WHICH=G|C|R NUM=... STRESS=... THREADS=8 (build h).
set -u
O=$OUT
G="accelkv:gpu_compaction=force+use_direct_io_for_flush_and_compaction=true"
C="accelkv:gpu_compaction=off+use_direct_io_for_flush_and_compaction=true"
R="rocksdb"
case "$WHICH" in G) CFG=$G;; C) CFG=$C;; R) CFG=$R;; esac
df -h /tmp | tail -1; nvidia-smi --query-gpu=name --format=csv,noheader
OUT=$O/$WHICH$NUM BENCH_BIN=.carry/h3/accelkv-bench GPU_ALL_PARTS=db GPU_DB_BENCH_NUM=$NUM \
  GPU_DB_BENCH_THREADS=${THREADS:-8} GPU_DB_BENCH_STRESS=$STRESS GPU_DB_BENCH_TIMEOUT=${TMO:-570} GPU_DB_BENCH_CONFIGS="$CFG" \
  bash scripts/gpu_all.sh 2>&1 | grep -E "ops/s|Executor|stages|fillrandom|settle" | head -20
python3 - "$O/$WHICH$NUM/db_bench.jsonl" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print({k:d.get(k) for k in ("ops_per_sec","seconds","lat_us_p99","lat_us_p999","compaction_wait_sec","write_amp","cpu_sec","verified")})
    print("\n".join(d.get("engine_stats","").splitlines()[:12]))
PY
