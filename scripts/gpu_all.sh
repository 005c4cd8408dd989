#!/usr/bin/env bash
# Runs every GPU test and the compaction micro-benchmark (CPU vs GPU
# executor) on the GPU machine in one go, logging under $OUT.
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
# GPU_DB_BENCH_STRESS ("0 15"), GPU_DB_BENCH_THREADS (1), ACCELKV_GPU_BENCH_MB, ACCELKV_GPU_BENCH_VALUES
# (see tests/gpu/gpu_bench_test.cc), GPU_COMPACT_VALUES ("32 128 1024 4096"),
# GPU_COMPACT_MB (256: about that many MB of input per job),
# GPU_COMPACT_THREADS (16: the CPU executor's subcompactions).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/accelkv-gpu-out}
mkdir -p "$OUT"
BIN=${GPU_TEST_BIN:-build-h/tests/gpu_test}
rc=0
# Parts to run (all by default): tests (gpu_test + DB tests forced onto the
# GPU), micro (the compaction micro-benchmark), compact (accelkv-bench's
# compact workload), db (the DB-level benchmark).
PARTS=${GPU_ALL_PARTS:-tests,micro,compact,db}
want() { [[ ",$PARTS," == *",$1,"* ]]; }

{ nvidia-smi; nproc; uname -a; } >"$OUT/machine.txt" 2>&1

if [ ! -x "$BIN" ]; then
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

if want micro; then
echo "== compaction micro-benchmark"
timeout 300 "$BIN" --gtest_also_run_disabled_tests --gtest_filter='GpuBench.*' 2>&1 |
  tee "$OUT/bench.log" | grep -E "^BENCH|Failure|FAILED|OK \]|Skipped" || true
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
grep '^BENCH ' "$OUT/bench.log" | sed 's/^BENCH //' >"$OUT/bench.jsonl" || true
fi

# accelkv-bench needs to be built with CUDA (BENCH_BIN, default build-bench-gpu/...).
BENCH_BIN=${BENCH_BIN:-build-bench-gpu/bench/accelkv-bench}

# The compact workload (docs/bench.md): one in-memory compaction job per
# value size, run by the CPU executor with GPU_COMPACT_THREADS subcompactions
# and by the GPU executor, every output checked byte for byte against the
# one-thread CPU executor. JSON lines in compact.jsonl, tables in compact.log.
if ! want compact; then
  :
elif [ -x "$BENCH_BIN" ]; then
  for v in ${GPU_COMPACT_VALUES:-32 128 1024 4096}; do
    # L0 holds num entries and L1 num/2: about GPU_COMPACT_MB MB in all.
    num=$(( ${GPU_COMPACT_MB:-256} * 1000000 * 2 / (3 * (v + 40)) ))
    echo "== compact: value $v B, num $num, cpu x${GPU_COMPACT_THREADS:-16} and gpu"
    timeout 300 "$BENCH_BIN" --workload=compact --executor=cpu,gpu \
      --threads="${GPU_COMPACT_THREADS:-16}" --num="$num" --key-size=16 --value-size="$v" \
      --json="$OUT/compact.jsonl" 2>&1 | tee -a "$OUT/compact.log" |
      grep -E "^(cpu|gpu) |skipped|FAILED|compact:" || true
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
  done
else
  echo "== no GPU bench binary at $BENCH_BIN: compact workload not run"
fi

# Database level: fillrandom with the GPU executor forced, on auto, and off
# (the CPU executor), RocksDB beside, without and with CPU stress.
if ! want db; then
  :
elif [ -x "$BENCH_BIN" ]; then
  num=${GPU_DB_BENCH_NUM:-5000000}
  for stress in ${GPU_DB_BENCH_STRESS:-0 15}; do
    for cfg in accelkv:gpu_compaction=force accelkv:gpu_compaction=off rocksdb; do
      engine=${cfg%%:*}
      extra=()
      [ "$cfg" != "$engine" ] && extra=(--engine-opt "$cfg")
      echo "== db bench: $cfg fillrandom num=$num threads=${GPU_DB_BENCH_THREADS:-1} stress-cpu=$stress"
      rm -rf /tmp/gpu-db-bench
      timeout 240 "$BENCH_BIN" --engine="$engine" --workload=fillrandom --num="$num" \
        --threads="${GPU_DB_BENCH_THREADS:-1}" --key-size=16 --value-size=128 --stress-cpu="$stress" --quiet \
        --db=/tmp/gpu-db-bench --json="$OUT/db_bench.jsonl" "${extra[@]}" 2>>"$OUT/db_bench.log" |
        grep -E "^(accelkv|rocksdb) " || rc=1
      tail -n 1 "$OUT/db_bench.jsonl" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print("\n".join(l for l in d.get("engine_stats","").splitlines() if "Executor" in l or "gpu compaction" in l or "stages" in l))' || true
    done
  done
  rm -rf /tmp/gpu-db-bench
else
  echo "== no GPU bench binary at $BENCH_BIN: DB-level benchmark not run"
fi
exit $rc
