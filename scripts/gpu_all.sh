#!/usr/bin/env bash
# Runs every GPU test and the GPU benchmarks (accelkv-bench's compact
# workload, CPU vs GPU executor; the database level; end to end from disk;
# the offload crossover) on the GPU machine in one go, logging under $OUT.
#
# The GPU machine has nvcc, cmake and g++ but maybe not GoogleTest or
# xxhash headers, so the test binary is normally built on the dev machine
# (tests link gtest and cudart statically) and carried:
#   cmake -S . -B build-h -DACCELKV_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
#     -DCMAKE_CUDA20_STANDARD_COMPILE_OPTION=-std=c++20 \
#     -DCMAKE_CUDA20_EXTENSION_COMPILE_OPTION=-std=c++20 -DACCELKV_BUILD_BENCH=OFF
#   cmake --build build-h -j1 --target gpu_test
#   device run, carry build-h/tests/gpu_test:  bash scripts/gpu_all.sh
# Without a carried binary it configures and builds build-gpu there.
# Env: GPU_TEST_BIN (default build-h/tests/gpu_test), DB_TEST_BIN (default
# db_test beside it), BENCH_BIN (accelkv-bench built with CUDA, default
# build-bench-gpu/bench/accelkv-bench), GPU_DB_BENCH_NUM (5000000),
# GPU_DB_BENCH_STRESS ("0 15"), GPU_DB_BENCH_THREADS (1), GPU_DB_BENCH_CONFIGS (the
# engines and options, default "accelkv:gpu_compaction=force accelkv:gpu_compaction=off
# rocksdb"; several options joined with +, e.g.
# accelkv:gpu_compaction=off+use_direct_io_for_flush_and_compaction=true), GPU_DB_BENCH_TIMEOUT (240 s per run), GPU_DB_BENCH_TIME_LIMIT (0: none; else
# --time-limit, so a load that does not finish still reports its rate over the keys it
# loaded; keep it below the timeout), GPU_DB_BENCH_PARTITIONS (1: --partitions), GPU_COMPACT_VALUES ("32 128 1024 4096
# 100:20000 16:2097152"; LO:HI: values of mixed sizes from LO to HI bytes),
# GPU_COMPACT_MB (256: about that many MB of input per job), GPU_COMPACT_ENVS
# ("mem mem-pinned": the in-memory Envs, plain and page-locked),
# GPU_COMPACT_THREADS (16: the CPU executor's subcompactions; also the disk
# part's), GPU_DISK_DIR (/tmp/accelkv-disk-bench: the disk part's directory,
# on the file system to measure), GPU_DISK_VALUES ("128"), GPU_DISK_MB (256),
# GPU_DISK_DD_MB (1024: bytes dd writes per measurement), GPU_DISK_ARGS (more
# accelkv-bench flags for the disk part, e.g. --compact-direct-writes=true, or
# --compact-drop-cache=false to leave the inputs in the page cache).
#
# Part `disk` (not in the default list: GPU_ALL_PARTS=disk, or e.g.
# tests,compact,db,disk) is issue 4's end-to-end target: dd measures the
# sequential write bandwidth of GPU_DISK_DIR's file system (8 MiB blocks,
# buffered + fdatasync, and O_DIRECT + fdatasync; the higher counts), then
# the compact workload runs with --compact-dir=GPU_DISK_DIR/job: inputs read
# from the disk (page cache dropped before each run), outputs fsynced there.
# dd.json (also the first line of disk.jsonl), disk.jsonl, disk.log, and
# disk.md (summary.py's table: output GB/s over dd GB/s, target >= 0.8).
# Every file it writes is removed afterwards. About 30-60 s for 256 MB.
# Only that part, with a carried bench binary:
#   device run, carry build-bench-gpu/bench/accelkv-bench:
#     GPU_ALL_PARTS=disk bash scripts/gpu_all.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/accelkv-gpu-out}
mkdir -p "$OUT"
BIN=${GPU_TEST_BIN:-build-h/tests/gpu_test}
rc=0
# Parts to run (the first three by default): tests (gpu_test + DB tests forced
# onto the GPU), compact (accelkv-bench's compact workload, the compaction
# micro-benchmark), db (the DB-level benchmark), disk (the
# compact workload from files on disk to fsynced files, beside dd), crossover
# (the offload threshold: job sizes from 1 to 64 MB, one CPU thread vs GPU;
# not in the default list).
PARTS=${GPU_ALL_PARTS:-tests,compact,db}
want() { [[ ",$PARTS," == *",$1,"* ]]; }

{ nvidia-smi; nproc; uname -a; } >"$OUT/machine.txt" 2>&1

if [ ! -x "$BIN" ] && want tests; then
  BIN=build-gpu/tests/gpu_test
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCELKV_WERROR=ON \
    -DACCELKV_BUILD_BENCH=OFF -DACCELKV_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_CUDA20_STANDARD_COMPILE_OPTION=-std=c++20 \
    -DCMAKE_CUDA20_EXTENSION_COMPILE_OPTION=-std=c++20 >"$OUT/build.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" --target gpu_test >>"$OUT/build.log" 2>&1 ||
    { echo "build failed (see build.log)"; tail -40 "$OUT/build.log"; exit 1; }
fi

if want tests; then
echo "== gpu tests ($BIN)"
"$BIN" 2>&1 | tee "$OUT/gpu_test.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|Skipped|^no GPU" || true
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1

DB_BIN=${DB_TEST_BIN:-$(dirname "$BIN")/db_test}
if [ -x "$DB_BIN" ]; then
  echo "== db tests with every compaction forced onto the GPU executor ($DB_BIN)"
  ACCELKV_TEST_GPU_COMPACTION=force "$DB_BIN" \
    --gtest_filter='Envs/DBModelTest.*:DBCrashTest.*:DBGpuTest.*' 2>&1 |
    tee "$OUT/db_gpu_test.log" | grep -E "^\[  (PASSED|FAILED) |Failure|db_gpu_test:" || true
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
else
  echo "== no db_test binary at $DB_BIN: DB-level GPU tests not run"; rc=1
fi
fi


# accelkv-bench needs to be built with CUDA (BENCH_BIN, default build-bench-gpu/...).
BENCH_BIN=${BENCH_BIN:-build-bench-gpu/bench/accelkv-bench}

# The compact workload (docs/bench.md): one in-memory compaction job per
# value size and in-memory Env, run by the CPU executor with GPU_COMPACT_THREADS subcompactions
# and by the GPU executor, every output checked byte for byte against the
# one-thread CPU executor. JSON lines in compact.jsonl, tables in compact.log.
if ! want compact; then
  :
elif [ -x "$BENCH_BIN" ]; then
  for v in ${GPU_COMPACT_VALUES:-32 128 1024 4096 100:20000 16:2097152}; do
    # LO:HI: values of mixed sizes, each from LO to HI bytes
    # (--compact-value-size-max); the mean sizes the job.
    lo=${v%:*}
    hi=${v#*:}
    # L0 holds num entries and L1 num/2: about GPU_COMPACT_MB MB in all.
    num=$(( ${GPU_COMPACT_MB:-256} * 1000000 * 2 / (3 * ((lo + hi) / 2 + 40)) ))
    # Each in-memory Env: mem (plain), mem-pinned (page-locked files the
    # GPU executor copies in place: --compact-pinned-mem).
    for env in ${GPU_COMPACT_ENVS:-mem mem-pinned}; do
      pinned=$([ "$env" = mem-pinned ] && echo true || echo false)
      echo "== compact: value $v B, num $num, env $env, cpu x${GPU_COMPACT_THREADS:-16} and gpu"
      timeout 300 "$BENCH_BIN" --workload=compact --executor=cpu,gpu \
        --threads="${GPU_COMPACT_THREADS:-16}" --num="$num" --key-size=16 --value-size="$lo" \
        --compact-value-size-max="$([ "$lo" = "$hi" ] && echo 0 || echo "$hi")" \
        --compact-pinned-mem="$pinned" \
        --json="$OUT/compact.jsonl" 2>&1 | tee -a "$OUT/compact.log" |
        grep -E "^(cpu|gpu) |skipped|FAILED|compact:" || true
      [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    done
  done
else
  echo "== no GPU bench binary at $BENCH_BIN: compact workload not run"
fi

# The offload crossover (GpuExecutorOptions::min_input_bytes,
# Options::gpu_min_compaction_bytes): the compact workload at several job
# sizes, the CPU executor with one thread (the database's default
# max_subcompactions = 1) against the GPU executor. JSON lines in
# crossover.jsonl. GPU_CROSSOVER_MB ("1 2 4 8 16 32 64"), GPU_CROSSOVER_VALUES
# ("32 128 1024").
if ! want crossover; then
  :
elif [ -x "$BENCH_BIN" ]; then
  for v in ${GPU_CROSSOVER_VALUES:-32 128 1024}; do
    for mb in ${GPU_CROSSOVER_MB:-1 2 4 8 16 32 64}; do
      num=$(( mb * 1000000 * 2 / (3 * (v + 40)) ))
      echo "== crossover: value $v B, about $mb MB, num $num, cpu x1 and gpu"
      timeout 120 "$BENCH_BIN" --workload=compact --executor=cpu,gpu --threads=1 --num="$num" \
        --key-size=16 --value-size="$v" --json="$OUT/crossover.jsonl" 2>&1 |
        tee -a "$OUT/crossover.log" | grep -E "^(cpu|gpu) |skipped|FAILED" || true
      [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    done
  done
else
  echo "== no GPU bench binary at $BENCH_BIN: crossover not run"
fi

# Database level: fillrandom with the GPU executor forced, on auto, and off
# (the CPU executor), RocksDB beside, without and with CPU stress.
if ! want db; then
  :
elif [ -x "$BENCH_BIN" ]; then
  num=${GPU_DB_BENCH_NUM:-5000000}
  for stress in ${GPU_DB_BENCH_STRESS:-0 15}; do
    for cfg in ${GPU_DB_BENCH_CONFIGS:-accelkv:gpu_compaction=force accelkv:gpu_compaction=off rocksdb}; do
      # engine[:opt=value[+opt=value...]]: each option one --engine-opt.
      engine=${cfg%%:*}
      extra=()
      if [ "$cfg" != "$engine" ]; then
        IFS='+' read -ra opts <<<"${cfg#*:}"
        for o in "${opts[@]}"; do extra+=(--engine-opt "$engine:$o"); done
      fi
      echo "== db bench: $cfg fillrandom num=$num threads=${GPU_DB_BENCH_THREADS:-1} stress-cpu=$stress partitions=${GPU_DB_BENCH_PARTITIONS:-1}"
      rm -rf /tmp/gpu-db-bench
      timeout "${GPU_DB_BENCH_TIMEOUT:-240}" "$BENCH_BIN" --engine="$engine" --workload=fillrandom --num="$num" \
        --threads="${GPU_DB_BENCH_THREADS:-1}" --key-size=16 --value-size=128 --stress-cpu="$stress" --quiet \
        --partitions="${GPU_DB_BENCH_PARTITIONS:-1}" --time-limit="${GPU_DB_BENCH_TIME_LIMIT:-0}" \
        --db=/tmp/gpu-db-bench --json="$OUT/db_bench.jsonl" "${extra[@]}" 2>>"$OUT/db_bench.log" |
        grep -E "^(accelkv|rocksdb|leveldb) " || rc=1
      tail -n 1 "$OUT/db_bench.jsonl" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print("\n".join(l for l in d.get("engine_stats","").splitlines() if "Executor" in l or "gpu compaction" in l or "stages" in l))' || true
    done
  done
  rm -rf /tmp/gpu-db-bench
else
  echo "== no GPU bench binary at $BENCH_BIN: DB-level benchmark not run"
fi

# End to end (issue 4: output >= 80% of dd's sequential write bandwidth):
# dd on GPU_DISK_DIR's file system, then the compact workload with its files
# there. See the header.
if ! want disk; then
  :
elif [ -x "$BENCH_BIN" ]; then
  DISK_DIR=${GPU_DISK_DIR:-/tmp/accelkv-disk-bench}
  made_disk_dir=0
  [ -d "$DISK_DIR" ] || made_disk_dir=1
  mkdir -p "$DISK_DIR"
  fs_type=$(stat -f -c %T "$DISK_DIR" 2>/dev/null)
  echo "== disk: $DISK_DIR ($fs_type): $(df -h "$DISK_DIR" | tail -n 1)"
  dd_count=$(( ${GPU_DISK_DD_MB:-1024} / 8 ))
  # dd's summary line ("N bytes (...) copied, S s, R GB/s"), C locale.
  dd_run() {
    LC_ALL=C dd if=/dev/zero of="$DISK_DIR/dd.bin" bs=8M count="$dd_count" "$@" 2>&1 | tail -n 1
    rm -f "$DISK_DIR/dd.bin"
  }
  dd_buffered=$(dd_run conv=fdatasync)
  dd_direct=$(dd_run oflag=direct conv=fdatasync)
  # The read side too (a compaction reads more than it writes): the file
  # written and synced, the page cache dropped, read back with O_DIRECT.
  LC_ALL=C dd if=/dev/zero of="$DISK_DIR/dd.bin" bs=8M count="$dd_count" conv=fdatasync 2>/dev/null
  sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
  dd_read=$(LC_ALL=C dd if="$DISK_DIR/dd.bin" of=/dev/null bs=8M iflag=direct 2>&1 | tail -n 1)
  # Both at once, as a compaction does: the same read beside a direct write
  # of as many bytes (does the disk share one bandwidth between them?).
  sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
  LC_ALL=C dd if="$DISK_DIR/dd.bin" of=/dev/null bs=8M iflag=direct 2>"$DISK_DIR/dd.read.err" &
  dd_both_write=$(LC_ALL=C dd if=/dev/zero of="$DISK_DIR/dd2.bin" bs=8M count="$dd_count" \
    oflag=direct conv=fdatasync 2>&1 | tail -n 1)
  wait
  dd_both_read=$(tail -n 1 "$DISK_DIR/dd.read.err")
  rm -f "$DISK_DIR/dd.bin" "$DISK_DIR/dd2.bin" "$DISK_DIR/dd.read.err"
  echo "dd conv=fdatasync:              $dd_buffered"
  echo "dd oflag=direct conv=fdatasync: $dd_direct"
  echo "dd read iflag=direct:           $dd_read"
  echo "dd read and write at once:      read $dd_both_read; write $dd_both_write"
  python3 - "$DISK_DIR" "$fs_type" "$dd_buffered" "$dd_direct" "$dd_read" "$dd_both_read" \
    "$dd_both_write" >"$OUT/dd.json" <<'PY' || rc=1
import json, re, sys
d, fs, lines = sys.argv[1], sys.argv[2], {"fdatasync": sys.argv[3], "direct": sys.argv[4]}
def rate(line):
    m = re.match(r"(\d+) bytes .* copied, ([0-9.eE+-]+) s", line)
    return int(m.group(1)) / 1e9 / float(m.group(2)) if m and float(m.group(2)) > 0 else None
read_gbs = rate(sys.argv[5])
row = {"workload": "dd", "dir": d, "fs_type": fs, "bs": "8M"}
rates = []
for k, line in lines.items():
    m = re.match(r"(\d+) bytes .* copied, ([0-9.eE+-]+) s", line)
    gbs = int(m.group(1)) / 1e9 / float(m.group(2)) if m and float(m.group(2)) > 0 else None
    row[k + "_line"] = line
    row[k + "_gb_per_sec"] = gbs
    if gbs:
        rates.append(gbs)
row["dd_gb_per_sec"] = max(rates) if rates else None
row["read_direct_line"] = sys.argv[5]
row["read_direct_gb_per_sec"] = read_gbs
row["concurrent_read_line"], row["concurrent_write_line"] = sys.argv[6], sys.argv[7]
row["concurrent_read_gb_per_sec"] = rate(sys.argv[6])
row["concurrent_write_gb_per_sec"] = rate(sys.argv[7])
print(json.dumps(row))
sys.exit(0 if rates else 1)
PY
  cat "$OUT/dd.json" >>"$OUT/disk.jsonl"
  for v in ${GPU_DISK_VALUES:-128}; do
    num=$(( ${GPU_DISK_MB:-256} * 1000000 * 2 / (3 * (v + 40)) ))
    echo "== disk: compact value $v B, num $num, files under $DISK_DIR/job, cpu x${GPU_COMPACT_THREADS:-16} and gpu"
    timeout 300 "$BENCH_BIN" --workload=compact --executor=cpu,gpu \
      --threads="${GPU_COMPACT_THREADS:-16}" --num="$num" --key-size=16 --value-size="$v" \
      --compact-dir="$DISK_DIR/job" ${GPU_DISK_ARGS:-} --json="$OUT/disk.jsonl" 2>&1 | tee -a "$OUT/disk.log" |
      grep -E "^(cpu|gpu) |skipped|FAILED|compact:" || true
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
  done
  rm -rf "$DISK_DIR/job" "$DISK_DIR/dd.bin"
  [ "$made_disk_dir" = 1 ] && rmdir "$DISK_DIR" 2>/dev/null
  python3 - "$OUT/disk.env.json" "$DISK_DIR ($fs_type)" <<'PY' || true
import datetime, json, platform, subprocess, sys
def sh(c):
    try:
        return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""
env = {"date": datetime.date.today().isoformat(), "machine": platform.node(),
       "cores": sh("nproc"), "gpu": sh("nvidia-smi --query-gpu=name --format=csv,noheader"),
       "disk": sys.argv[2], "kernel": platform.release(),
       "commands": ["GPU_ALL_PARTS=disk bash scripts/gpu_all.sh"]}
json.dump(env, open(sys.argv[1], "w"))
PY
  python3 bench/summary.py "$OUT/disk.jsonl" "$OUT/disk.env.json" >"$OUT/disk.md" &&
    sed -n '/^## End to end/,/^## [^E]/p' "$OUT/disk.md" || rc=1
else
  echo "== no GPU bench binary at $BENCH_BIN: disk part not run"
fi
exit $rc
