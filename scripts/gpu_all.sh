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
# Env: GPU_TEST_BIN (default build-h/tests/gpu_test), ACCELKV_GPU_BENCH_MB,
# ACCELKV_GPU_BENCH_VALUES (see tests/gpu/gpu_bench_test.cc).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/accelkv-gpu-out}
mkdir -p "$OUT"
BIN=${GPU_TEST_BIN:-build-h/tests/gpu_test}
rc=0

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

echo "== gpu tests ($BIN)"
"$BIN" 2>&1 | tee "$OUT/gpu_test.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|Skipped|^no GPU" || true
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1

echo "== compaction micro-benchmark"
timeout 300 "$BIN" --gtest_also_run_disabled_tests --gtest_filter='GpuBench.*' 2>&1 |
  tee "$OUT/bench.log" | grep -E "^BENCH|Failure|FAILED|OK \]|Skipped" || true
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
grep '^BENCH ' "$OUT/bench.log" | sed 's/^BENCH //' >"$OUT/bench.jsonl" || true
exit $rc
