#!/usr/bin/env bash
# The main job: set up, build, then create a database under ./accelkv-data,
# load a few million keys, read them back (verified) and print throughput and
# the store's stats. Usage: scripts/main.sh [NUM_KEYS] (default 3000000).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DACCELKV_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target accelkv_cli
rm -rf accelkv-data
./build/tools/accelkv --db accelkv-data load --num "${1:-3000000}" --value-size 100
