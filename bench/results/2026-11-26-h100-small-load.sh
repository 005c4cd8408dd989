#!/bin/bash
# A small load (fillrandom 5M keys, one writer, no stress, 16 B keys, 128 B
# values, buffered table I/O: scripts/gpu_all.sh's database part) with the
# GPU executor (force), without it (off), and with it created but given no
# job (auto with gpu_min_compaction_bytes of 1 PB: the CUDA context and the
# executor exist, every job runs on the CPU), in ROUNDS rounds, on the H100
# machine. JSON rows go to $OUT/small.jsonl, each preceded in $OUT/small.log
# by "== round variant".
OUT=${OUT:-/tmp/out}
B=${B:-.carry/w26/accelkv-bench}
ROUNDS=${ROUNDS:-"1 2"}
NUM=${NUM:-5000000}
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; uname -r; } >"$OUT/small.log" 2>&1
for round in $ROUNDS; do
  for variant in force off idle; do
    case $variant in
    force) opts=(--engine-opt accelkv:gpu_compaction=force) ;;
    off) opts=(--engine-opt accelkv:gpu_compaction=off) ;;
    idle) opts=(--engine-opt accelkv:gpu_compaction=auto
      --engine-opt accelkv:gpu_min_compaction_bytes=1000000000000000) ;;
    esac
    echo "== $round $variant" >>"$OUT/small.log"
    rm -rf /tmp/small-db
    $B --engine=accelkv --workload=fillrandom --num="$NUM" --threads=1 --key-size=16 \
      --value-size=128 --quiet --stats --db=/tmp/small-db --json="$OUT/small.jsonl" "${opts[@]}" \
      >>"$OUT/small.log" 2>&1
  done
done
rm -rf /tmp/small-db
python3 - "$OUT/small.log" "$OUT/small.jsonl" <<'PY'
import json, sys
tags = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("== ")]
for tag, line in zip(tags, open(sys.argv[2])):
    d = json.loads(line)
    ex = [l for l in d.get("engine_stats", "").splitlines() if l.startswith(("Executor", "gpu compaction", "Stalls"))]
    print(tag, round(d["ops_per_sec"]), "p50", d["lat_us_p50"], "p99", d["lat_us_p99"], "max", d["lat_us_max"],
          "cpu", d["cpu_sec"], "rss", d.get("peak_rss_bytes"), ex)
PY
