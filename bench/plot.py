#!/usr/bin/env python3
"""PNG plots of an accelkv-bench results file (JSON lines).

usage: plot.py RESULTS.json OUT_PREFIX

Writes OUT_PREFIX-throughput.png (ops/s bars per workload, one bar per
engine, log scale) and OUT_PREFIX-latency.png (p50 / p99 / p99.9 latency
per workload and engine, log scale). Needs matplotlib (Debian
python3-matplotlib).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"accelkv": "#d62728", "rocksdb": "#1f77b4", "leveldb": "#2ca02c"}


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def grouped(rows):
    engines, workloads, table = [], [], {}
    for r in rows:
        if r["engine"] not in engines:
            engines.append(r["engine"])
        if r["workload"] not in workloads:
            workloads.append(r["workload"])
        table[(r["engine"], r["workload"])] = r
    return engines, workloads, table


def throughput(rows, out):
    engines, workloads, table = grouped(rows)
    width = 0.8 / max(1, len(engines))
    fig, ax = plt.subplots(figsize=(max(8, 0.8 * len(workloads) + 2), 5))
    for i, e in enumerate(engines):
        xs = [w + (i - (len(engines) - 1) / 2) * width for w in range(len(workloads))]
        ys = [table.get((e, w), {}).get("ops_per_sec") or 0 for w in workloads]
        ax.bar(xs, ys, width, label=e, color=COLORS.get(e))
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels(workloads, rotation=45, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("operations / second (log)")
    ax.set_title("Throughput per workload")
    ax.legend()
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def latency(rows, out):
    engines, workloads, table = grouped(rows)
    keys = [("lat_us_p50", "p50"), ("lat_us_p99", "p99"), ("lat_us_p999", "p99.9")]
    fig, axes = plt.subplots(len(keys), 1, figsize=(max(10, 0.8 * len(workloads) + 2), 11),
                             sharex=True)
    width = 0.8 / max(1, len(engines))
    for ax, (key, label) in zip(axes, keys):
        for i, e in enumerate(engines):
            xs = [w + (i - (len(engines) - 1) / 2) * width for w in range(len(workloads))]
            ys = [table.get((e, w), {}).get(key) or 0 for w in workloads]
            ax.bar(xs, ys, width, label=e, color=COLORS.get(e))
        ax.set_yscale("log")
        ax.set_ylim(bottom=0.1)
        ax.set_ylabel(f"{label} (us, log)")
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[-1].set_xticks(range(len(workloads)))
    axes[-1].set_xticklabels(workloads, rotation=45, ha="right")
    axes[0].set_title("Latency percentiles per workload")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = load(sys.argv[1])
    if not rows:
        sys.exit(f"{sys.argv[1]}: no results")
    throughput(rows, sys.argv[2] + "-throughput.png")
    latency(rows, sys.argv[2] + "-latency.png")


if __name__ == "__main__":
    main()
