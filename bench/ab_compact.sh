#!/usr/bin/env bash
# A/B of accelkv-bench builds on the compaction micro-benchmark (workload
# compact: input tables in memory, output to memory, every output checked
# byte for byte against the one-thread CPU executor's). Per round and value
# size: the 16-thread CPU executor once (the first build's binary, the
# reference of the ratios), then the GPU executor of every build, their order
# reversed in every second round (ABBA), since the GPU machine drifts within
# a call.
#
#   BUILDS="old=.carry/w1/accelkv-bench new=.carry/w2/accelkv-bench" \
#     OUT=$OUT bash bench/ab_compact.sh
#
# BUILDS   name=binary pairs (at least one); a name may carry environment
#          settings and flags for its runs after a colon, comma-separated:
#          dev=.carry/w2/accelkv-bench:ACCELKV_GPU_ENCODE=device
#          pinned=.carry/w2/accelkv-bench:--compact-pinned-mem=true
# CPU_ALSO names of builds (after the first) whose CPU executor runs too,
#          as build "cpu-NAME" beside the reference "cpu" (the first
#          build's), with that build's settings (default none)
# SIZES    value sizes (default "128 1024 4096"; LO:HI draws mixed sizes)
# ROUNDS   rounds (default 3)
# MB       about this many MB of input per job (default 256)
# THREADS  the CPU executor's subcompactions (default 16)
# OUT      output folder (default /tmp/ab-compact): ab.log (each run's
#          output after a "== round size build" line), ab.jsonl (the rows),
#          ab.json (the rows with round, size and build) and ab.md (the table
#          printed at the end: medians, and each GPU build over the CPU
#          executor and over the first build).
set -uo pipefail
BUILDS=${BUILDS:?BUILDS="name=binary ..." is required}
SIZES=${SIZES:-"128 1024 4096"}
ROUNDS=${ROUNDS:-3}
MB=${MB:-256}
THREADS=${THREADS:-16}
CPU_ALSO=${CPU_ALSO:-}
OUT=${OUT:-/tmp/ab-compact}
mkdir -p "$OUT"
: >"$OUT/ab.jsonl"
{ nvidia-smi -L 2>&1; nproc; uname -r; } >"$OUT/ab.log"

read -r -a builds <<<"$BUILDS"
first_bin() { local spec=${builds[0]#*=}; echo "${spec%%:*}"; }

# args SIZE: the flags of one job of about MB MB at that value size.
args() {
  local v=$1 lo hi avg
  if [[ $v == *:* ]]; then
    lo=${v%%:*} hi=${v##*:} avg=$(((lo + hi) / 2))
    echo --threads="$THREADS" --num=$((MB * 1000000 * 2 / (3 * (avg + 40)))) --key-size=16 \
      --value-size="$lo" --compact-value-size-max="$hi"
  else
    echo --threads="$THREADS" --num=$((MB * 1000000 * 2 / (3 * (v + 40)))) --key-size=16 --value-size="$v"
  fi
}

# run ROUND SIZE NAME EXECUTOR BINARY [ENV or --FLAG...]
run() {
  local round=$1 size=$2 name=$3 executor=$4 bin=$5 envs=() flags=() x
  shift 5
  for x in "$@"; do
    if [[ $x == --* ]]; then flags+=("$x"); else envs+=("$x"); fi
  done
  echo "== $round $size $name" >>"$OUT/ab.log"
  # shellcheck disable=SC2046 # args is a word list
  env "${envs[@]}" "$bin" --workload=compact --executor="$executor" $(args "$size") "${flags[@]}" \
    --json="$OUT/ab.jsonl" >>"$OUT/ab.log" 2>&1 || echo "== failed rc=$?" >>"$OUT/ab.log"
}

# settings SPEC: the environment settings and flags of a build's spec, one a line.
settings() {
  [[ $1 == *:* ]] || return 0
  local -a parts
  IFS=, read -r -a parts <<<"${1#*:}"
  printf '%s\n' "${parts[@]}"
}

for ((round = 1; round <= ROUNDS; round++)); do
  order=("${builds[@]}")
  if ((round % 2 == 0)); then
    order=()
    for ((i = ${#builds[@]} - 1; i >= 0; i--)); do order+=("${builds[i]}"); done
  fi
  for size in $SIZES; do
    first=${builds[0]#*=}
    mapfile -t envs < <(settings "$first")
    run "$round" "$size" cpu cpu "$(first_bin)" "${envs[@]}"
    for b in "${builds[@]:1}"; do
      name=${b%%=*} spec=${b#*=}
      [[ " $CPU_ALSO " == *" $name "* ]] || continue
      mapfile -t envs < <(settings "$spec")
      run "$round" "$size" "cpu-$name" cpu "${spec%%:*}" "${envs[@]}"
    done
    for b in "${order[@]}"; do
      name=${b%%=*} spec=${b#*=}
      mapfile -t envs < <(settings "$spec")
      run "$round" "$size" "$name" gpu "${spec%%:*}" "${envs[@]}"
    done
  done
done

python3 - "$OUT" "$THREADS" "${builds[@]%%=*}" <<'PY'
import json, statistics, sys
out, threads, names = sys.argv[1], sys.argv[2], sys.argv[3:]
tags = [l.split()[1:4] for l in open(f"{out}/ab.log") if l.startswith("== ") and not l.startswith("== failed")]
failed = sum(1 for l in open(f"{out}/ab.log") if l.startswith("== failed"))
rows = [json.loads(l) for l in open(f"{out}/ab.jsonl")]
if failed or len(rows) != len(tags):
    print(f"ab_compact: {failed} runs failed; {len(rows)} rows for {len(tags)} runs: see ab.log")
    tags = tags[:len(rows)] if not failed else []
runs = [{"round": int(t[0]), "size": t[1], "build": t[2], "row": r} for t, r in zip(tags, rows)]
json.dump({"runs": runs}, open(f"{out}/ab.json", "w"), indent=1)
by = {}
for r in runs:
    by.setdefault((r["size"], r["build"]), []).append(r["row"])
lines = [f"| value | build | input GB/s (runs) | median | / CPU x{threads} | / " + names[0] + " | job ms (median) | verified |",
         "|---|---|---|---|---|---|---|---|"]
for size in dict.fromkeys(r["size"] for r in runs):
    cpu = by.get((size, "cpu"), [])
    cpu_med = statistics.median(x["input_gb_per_sec"] for x in cpu) if cpu else 0
    base = by.get((size, names[0]), [])
    base_med = statistics.median(x["input_gb_per_sec"] for x in base) if base else 0
    extra_cpu = sorted({b for (sz, b) in by if sz == size and b.startswith("cpu-")})
    for build in ["cpu"] + extra_cpu + names:
        xs = by.get((size, build), [])
        if not xs:
            continue
        g = [x["input_gb_per_sec"] for x in xs]
        med = statistics.median(g)
        ms = statistics.median(x["seconds"] * 1e3 for x in xs)
        vs_cpu = f"{med / cpu_med:.2f}x" if cpu_med and build != "cpu" else ""
        is_cpu = build == "cpu" or build.startswith("cpu-")
        vs_base = f"{med / base_med:.3f}x" if base_med and not is_cpu and build != names[0] else ""
        ok = all(x.get("verified") for x in xs)
        lines.append(f"| {size} | {build} | {', '.join(f'{v:.2f}' for v in g)} | {med:.2f} | "
                     f"{vs_cpu} | {vs_base} | {ms:.1f} | {'yes' if ok else 'NO'} |")
text = "\n".join(lines) + "\n"
open(f"{out}/ab.md", "w").write(text)
print(text, end="")
PY
