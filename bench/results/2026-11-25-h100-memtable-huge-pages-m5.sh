#!/usr/bin/env bash
# Call 1: one writer, 5M keys, no stress: huge pages off/on, RocksDB, LevelDB; then the GPU
# executor at 70M keys, 8 writers beside 15 busy threads (build h3 = d77586d).
set -u
O=$OUT
grep -i AnonHuge /proc/meminfo; cat /sys/kernel/mm/transparent_hugepage/enabled
for cfg in "accelkv --engine-opt accelkv:memtable_huge_pages=false" "accelkv --engine-opt accelkv:memtable_huge_pages=true" "rocksdb" "leveldb"; do
  rm -rf /tmp/mdb
  timeout 120 .carry/h3/accelkv-bench --engine=$cfg --engine-opt accelkv:gpu_compaction=force --workload=fillrandom --num=5000000 --threads=1 --key-size=16 --value-size=128 --quiet --db=/tmp/mdb --json=$O/m5.jsonl 2>&1 | grep -E "^(accelkv|rocksdb|leveldb) " | sed "s/^/[$cfg] /"
done
rm -rf /tmp/mdb
