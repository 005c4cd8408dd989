#!/usr/bin/env bash
# The standard comparison: every engine, every workload, sizes chosen for the
# machine it runs on. Writes, under bench/results/ (or $BENCH_OUT):
#   <date>-<machine>.json            one JSON object per engine x workload run
#   <date>-<machine>.md              summary: machine, exact commands, tables,
#                                    ratios AccelKV/RocksDB and AccelKV/LevelDB
#   <date>-<machine>-throughput.png  throughput bars per workload
#   <date>-<machine>-latency.png     p50 / p99 / p99.9 per workload
#   <date>-<machine>.log             the runs' stderr (effective options, progress)
# Each engine runs in its own process (fresh database, fresh allocator).
#
# Environment (all optional):
#   ACCELKV_BENCH_BIN  the binary (default: build-bench/bench/accelkv-bench,
#                      built with CMake if missing)
#   BENCH_ENGINES      comma list (default: every engine the binary has)
#   BENCH_WORKLOADS    comma list (default: all, YCSB in its A,B,C,F,D,E order)
#   BENCH_NUM          keys (default: 2M on <= 4 cores, 8M on <= 16, else 20M)
#   BENCH_OPS          ops per read/mixed workload (default: BENCH_NUM / 4)
#   BENCH_THREADS (1)  BENCH_KEY_SIZE (16)  BENCH_VALUE_SIZE (100)
#   BENCH_STRESS_CPU (0)  BENCH_SEED (301)
#   BENCH_DB           database parent directory (default: /tmp/accelkv-bench-suite)
#   BENCH_MACHINE      machine label in file names (default: derived from GPU/cores/memory)
#   BENCH_OUT          output directory (default: bench/results next to this script)
#   BENCH_EXTRA        more accelkv-bench flags, e.g. "--engine-opt rocksdb:max_background_jobs=4"
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"

cores=$(nproc)
mem_kib=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
mem_gib=$(( (mem_kib + 524288) / 1048576 ))
gpu="none"
if command -v nvidia-smi >/dev/null 2>&1; then
  gpu=$(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | paste -sd ';' - || true)
  [ -n "$gpu" ] || gpu="none (nvidia-smi found no GPU)"
fi

if [ -z "${BENCH_NUM:-}" ]; then
  if [ "$cores" -le 4 ]; then BENCH_NUM=2000000
  elif [ "$cores" -le 16 ]; then BENCH_NUM=8000000
  else BENCH_NUM=20000000
  fi
fi
BENCH_OPS=${BENCH_OPS:-$(( BENCH_NUM / 4 ))}
BENCH_THREADS=${BENCH_THREADS:-1}
BENCH_KEY_SIZE=${BENCH_KEY_SIZE:-16}
BENCH_VALUE_SIZE=${BENCH_VALUE_SIZE:-100}
BENCH_STRESS_CPU=${BENCH_STRESS_CPU:-0}
BENCH_SEED=${BENCH_SEED:-301}
BENCH_DB=${BENCH_DB:-/tmp/accelkv-bench-suite}
BENCH_OUT=${BENCH_OUT:-$here/results}
BENCH_WORKLOADS=${BENCH_WORKLOADS:-fillseq,fillrandom,overwrite,readrandom,readseq,readmissing,seekrandom,readwhilewriting,deleterandom,ycsb-load,ycsb-a,ycsb-b,ycsb-c,ycsb-f,ycsb-d,ycsb-e}

bin=${ACCELKV_BENCH_BIN:-$repo/build-bench/bench/accelkv-bench}
if [ ! -x "$bin" ]; then
  echo "run_suite: building $bin"
  cmake -S "$repo" -B "$repo/build-bench" -DCMAKE_BUILD_TYPE=Release -DACCELKV_BUILD_BENCH=ON \
    -DACCELKV_BUILD_TESTS=OFF -DACCELKV_WITH_CUDA=OFF >/dev/null
  cmake --build "$repo/build-bench" -j"$cores" --target accelkv_bench
fi

if [ -z "${BENCH_ENGINES:-}" ]; then
  # The engines this binary was built with (its error for an unknown one lists them).
  BENCH_ENGINES=$({ "$bin" --engine=none 2>&1 || true; } | sed -n 's/.*(available: \(.*\)).*/\1/p')
  [ -n "$BENCH_ENGINES" ] || { echo "run_suite: cannot list the binary's engines" >&2; exit 1; }
fi

if [ -z "${BENCH_MACHINE:-}" ]; then
  if [ "$gpu" = none ] || [[ "$gpu" == none* ]]; then prefix=cpu; else
    prefix=$(echo "$gpu" | head -1 | cut -d, -f1 | tr 'A-Z' 'a-z' | sed 's/nvidia//; s/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
  fi
  BENCH_MACHINE="${prefix}-${cores}c${mem_gib}g"
fi
date_tag=$(date -u +%Y-%m-%d)
stem="$BENCH_OUT/${date_tag}-${BENCH_MACHINE}"
mkdir -p "$BENCH_OUT" "$BENCH_DB"
: > "$stem.json"
: > "$stem.log"

disk_src=$(df -P "$BENCH_DB" | awk 'NR==2 {print $1}')
disk_fs=$(df -PT "$BENCH_DB" | awk 'NR==2 {print $2}')
disk_size=$(df -Ph "$BENCH_DB" | awk 'NR==2 {print $2}')
disk_model=""
if command -v lsblk >/dev/null 2>&1; then
  disk_model=$(lsblk -ndo MODEL,ROTA "$disk_src" 2>/dev/null | awk '{rot=$NF; $NF=""; printf "%s%s", $0, (rot=="1" ? "(rotational)" : "(non-rotational)")}' || true)
fi
cpu_model=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)

# Shell-quotes only the arguments that need it, so the command reads plainly.
quote_command() {
  local out="" arg
  for arg in "$@"; do
    if [[ "$arg" =~ ^[A-Za-z0-9_./=,:+@%-]+$ ]]; then out+="$arg "; else out+="$(printf '%q' "$arg") "; fi
  done
  echo "${out% }"
}

commands=()
status=0
IFS=, read -r -a engine_list <<< "$BENCH_ENGINES"
for engine in "${engine_list[@]}"; do
  cmd=("$bin" --engine="$engine" --workload="$BENCH_WORKLOADS" --num="$BENCH_NUM" --ops="$BENCH_OPS"
       --threads="$BENCH_THREADS" --key-size="$BENCH_KEY_SIZE" --value-size="$BENCH_VALUE_SIZE"
       --seed="$BENCH_SEED" --stress-cpu="$BENCH_STRESS_CPU" --db="$BENCH_DB" --json="$stem.json")
  # shellcheck disable=SC2206
  [ -n "${BENCH_EXTRA:-}" ] && cmd+=($BENCH_EXTRA)
  commands+=("$(quote_command "${cmd[@]}" | sed "s|$repo/||g")")
  echo "run_suite: ${commands[-1]}"
  if ! "${cmd[@]}" 2>> "$stem.log" | tee -a "$stem.log"; then
    echo "run_suite: $engine FAILED (see $stem.log)" >&2
    status=1
  fi
  rm -rf "${BENCH_DB:?}/$engine"
done

export BENCH_ENV_DATE="$date_tag" BENCH_ENV_MACHINE="$BENCH_MACHINE" BENCH_ENV_CPU="$cpu_model" \
  BENCH_ENV_CORES="$cores" BENCH_ENV_MEMORY="$mem_gib GiB" BENCH_ENV_GPU="$gpu" \
  BENCH_ENV_DISK="$disk_src $disk_fs $disk_size $disk_model" \
  BENCH_ENV_OS="$(. /etc/os-release && echo "$PRETTY_NAME")" BENCH_ENV_KERNEL="$(uname -r)" \
  BENCH_ENV_GIT="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
python3 -c '
import json, os, sys
env = {k[len("BENCH_ENV_"):].lower(): v.strip() for k, v in os.environ.items()
       if k.startswith("BENCH_ENV_")}
env["cores"] = int(env["cores"])
env["commands"] = sys.argv[2:]
json.dump(env, open(sys.argv[1], "w"), indent=1)
' "$stem.env.json" "${commands[@]}"

python3 "$here/summary.py" "$stem.json" "$stem.env.json" > "$stem.md"
echo "run_suite: wrote $stem.json $stem.md"
plot_python=""
for py in python3 /usr/bin/python3; do
  if "$py" -c "import matplotlib" 2>/dev/null; then plot_python=$py; break; fi
done
if [ -n "$plot_python" ]; then
  "$plot_python" "$here/plot.py" "$stem.json" "$stem"
  echo "run_suite: wrote $stem-throughput.png $stem-latency.png"
else
  echo "run_suite: matplotlib missing (python3-matplotlib): no plots; run bench/plot.py $stem.json $stem later" >&2
fi
exit $status
