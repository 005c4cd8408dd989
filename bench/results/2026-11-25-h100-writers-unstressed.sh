#!/usr/bin/env bash
# Writers without stress (build h3 + arena cache): fillrandom NUM keys, THREADS writers,
# AccelKV (GPU executor forced; CPU executor), RocksDB 11.8.1, LevelDB 1.23.
set -u
for t in ${THREADS:-16}; do
for cfg in "accelkv --engine-opt accelkv:gpu_compaction=force --engine-opt accelkv:use_direct_io_for_flush_and_compaction=true" "accelkv --engine-opt accelkv:gpu_compaction=off --engine-opt accelkv:use_direct_io_for_flush_and_compaction=true" "rocksdb" "leveldb"; do
  rm -rf /tmp/wdb
  /usr/bin/time -f "[time] %e s %U user %S sys" timeout ${TMO:-150} .carry/h4/accelkv-bench --engine=$cfg --workload=fillrandom --num=${NUM:-20000000} --threads=$t --key-size=16 --value-size=128 --quiet --db=/tmp/wdb --json=$OUT/w.jsonl 2>&1 | grep -E "^(accelkv|rocksdb|leveldb) |time" | sed "s/^/[$t $cfg] /"
done; done
rm -rf /tmp/wdb
