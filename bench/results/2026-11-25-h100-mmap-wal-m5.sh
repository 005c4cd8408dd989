#!/usr/bin/env bash
# mmap WAL on/off, one writer, no stress, and RocksDB/LevelDB beside: NUM keys.
set -u
for r in 1; do
for cfg in "accelkv --engine-opt accelkv:allow_mmap_writes=false" "accelkv --engine-opt accelkv:allow_mmap_writes=true" "rocksdb" "leveldb"; do
  rm -rf /tmp/mdb
  timeout 120 .carry/h2/accelkv-bench --engine=$cfg --engine-opt accelkv:gpu_compaction=force --workload=fillrandom --num=${NUM:-10000000} --threads=1 --key-size=16 --value-size=128 --quiet --db=/tmp/mdb --json=$OUT/m5.jsonl 2>&1 | grep -E "^(accelkv|rocksdb|leveldb) " | sed "s/^/[$cfg] /"
done; done
rm -rf /tmp/mdb
