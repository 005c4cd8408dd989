#!/bin/bash
# The device-encode chunk size (GpuExecutorOptions::encode_chunk_bytes, set
# by ACCELKV_GPU_ENCODE_CHUNK_BYTES) at 128 B, 1 KiB and 4 KiB values, in
# memory, on the H100 machine: per value size the CPU executor (16
# subcompactions) once, then the GPU executor with chunks of 8, 16, 32 (the
# default) and 64 MiB and one chunk (1 GiB), two rounds, the sizes
# interleaved. Build: .carry/w19 (c698716's code, Release, sm_90). JSON rows
# go to $OUT/chunk.jsonl, each preceded in $OUT/chunk.log by "== round
# value chunk_MiB".
OUT=${OUT:-/tmp/out}
B=${B:-.carry/w19/accelkv-bench}
mkdir -p "$OUT"
{ nvidia-smi -L; nproc; uname -r; } >"$OUT/chunk.log" 2>&1
args() { echo --threads=16 --num=$((256000000 * 2 / (3 * ($1 + 40)))) --key-size=16 --value-size=$1; }
for v in 128 1024 4096; do
  echo "== 0 $v cpu" >>"$OUT/chunk.log"
  $B --workload=compact --executor=cpu $(args $v) --json="$OUT/chunk.jsonl" >>"$OUT/chunk.log" 2>&1
done
for round in 1 2; do
  for v in 128 1024 4096; do
    for mb in 8 16 32 64 1024; do
      echo "== $round $v $mb" >>"$OUT/chunk.log"
      ACCELKV_GPU_ENCODE_CHUNK_BYTES=$((mb << 20)) $B --workload=compact --executor=gpu $(args $v) \
        --json="$OUT/chunk.jsonl" >>"$OUT/chunk.log" 2>&1
    done
  done
done
python3 - "$OUT/chunk.log" "$OUT/chunk.jsonl" <<'PY'
import json, sys
tags = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("== ")]
for tag, line in zip(tags, open(sys.argv[2])):
    d = json.loads(line)
    st = d.get("stage_us", {})
    print(tag, d["executor"], round(d["input_gb_per_sec"], 2), d["verified"],
          "gpu_encode", st.get("gpu_encode"), "write", st.get("write"), "chunks", d.get("gpu_chunks"))
PY
