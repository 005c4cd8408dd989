#!/usr/bin/env bash
# Device call: partitioned DB level. WHICH="G C R" NUM PARTS THREADS STRESS TMO BIN.
set -u
O=$OUT
G="accelkv:gpu_compaction=force+use_direct_io_for_flush_and_compaction=true"
C="accelkv:gpu_compaction=off+use_direct_io_for_flush_and_compaction=true"
R="rocksdb"
df -h /tmp | tail -1; nvidia-smi --query-gpu=name --format=csv,noheader; nproc
for W in ${WHICH:-G C R}; do
  case "$W" in G) CFG=$G;; C) CFG=$C;; R) CFG=$R;; esac
  OUT=$O/$W BENCH_BIN=${BIN:-.carry/h2/accelkv-bench} GPU_ALL_PARTS=db GPU_DB_BENCH_NUM=$NUM \
    GPU_DB_BENCH_THREADS=${THREADS:-8} GPU_DB_BENCH_STRESS=${STRESS:-15} GPU_DB_BENCH_TIMEOUT=${TMO:-400} \
    GPU_DB_BENCH_CONFIGS="$CFG" GPU_DB_BENCH_PARTITIONS=${PARTS:-8} \
    bash scripts/gpu_all.sh 2>&1 | grep -E "ops/s|fillrandom|db bench" | head -5
  python3 - "$O/$W/db_bench.jsonl" "$W" <<'PY'
import json,sys,re
for l in open(sys.argv[1]):
    d=json.loads(l)
    print(sys.argv[2], {k:d.get(k) for k in ("ops_per_sec","seconds","lat_us_p99","lat_us_p999","compaction_wait_sec","write_amp","cpu_sec","partitions","verified")})
    st=d.get("engine_stats","")
    ex=re.findall(r"Executor (\w+): (\d+) jobs, (\d+) fallbacks, in ([\d.]+) MiB, out ([\d.]+) MiB, ([\d.]+) s, ([\d.]+) CPU-s", st)
    agg={}
    for e in ex:
        a=agg.setdefault(e[0],[0,0,0.0,0.0,0.0,0.0])
        for i in range(6): a[i]+=float(e[i+1])
    for k,a in agg.items():
        print("  executor %s: jobs %d fallbacks %d in %.1f GiB out %.1f GiB job-s %.1f CPU-s %.1f CPU-s/GiB %.3f"%(k,a[0],a[1],a[2]/1024,a[3]/1024,a[4],a[5],a[5]/(a[2]/1024) if a[2] else 0))
    stalls=re.findall(r"Stalls: (\d+) stops, ([\d.]+) s stopped, ([\d.]+) s slowed", st)
    print("  stalls (stops, s stopped, s slowed):", [sum(float(s[i]) for s in stalls) for i in range(3)])
    rs=re.findall(r"Cumulative stall: [^\n]*", st)
    if rs: print("  rocksdb:", rs[:2])
PY
done
