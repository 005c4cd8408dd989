#!/usr/bin/env python3
"""Markdown summary of an accelkv-bench results file (JSON lines).

usage: summary.py RESULTS.json ENV.json > SUMMARY.md

RESULTS.json holds one object per workload run (accelkv-bench --json);
ENV.json describes the machine and the command (bench/run_suite.sh writes
it). Ratios are AccelKV over RocksDB and AccelKV over LevelDB: above 1 means
AccelKV is higher (better for throughput, worse for latency, amplification
and CPU). Rows of the compact workload (one object per executor) get their
own table, with each GPU run compared to the CPU run of the same value size.
Compact runs on the file system (--compact-dir, "env":"disk:...") get an
end-to-end table instead, their output rate over dd's sequential write rate
on the same file system ("workload":"dd" lines, scripts/gpu_all.sh part
disk; issue 4's target is >= 0.8).
Standard library only, so it runs where matplotlib is missing.
"""
import json
import sys


def load_results(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}")
    return rows


def fmt(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}"


def value_label(r):
    """A compact row's value size: "LO-HI" for mixed sizes (--compact-value-size-max)."""
    hi = r.get("value_size_max", 0)
    return f"{r['value_size']}-{hi}" if hi else str(r["value_size"])


def compact_table(out, rows):
    """The compact workload: one row per executor run, then GPU vs CPU."""
    out.append("## Compaction micro-benchmark (workload compact)")
    out.append("")
    bad = [r for r in rows if not r.get("skipped") and not r.get("verified")]
    if bad:
        out.append("**VERIFICATION FAILED** for: " + ", ".join(
            f"{r['executor']} value {value_label(r)} ({r.get('error', '')})" for r in bad))
    else:
        out.append("Every run's output was verified (byte-identical to the one-thread CPU "
                   "executor, whose output was checked entry by entry).")
    out.append("")
    head = ["value B", "executor", "device", "env", "threads", "ranges", "input MB", "output MB",
            "wall s", "input GB/s", "CPU s", "CPU s/GB", "verified"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for r in rows:
        if r.get("skipped"):
            out.append(f"| {value_label(r)} | {r['executor']} | skipped: {r['skipped']} |"
                       + " |" * (len(head) - 3))
            continue
        cells = [value_label(r), r["executor"], r.get("device", ""), r.get("env", "mem"),
                 str(r["threads"]),
                 str(r["subcompactions"]), fmt(r["input_bytes"] / 1e6, 1),
                 fmt(r["output_bytes"] / 1e6, 1), fmt(r["seconds"], 3),
                 fmt(r["input_gb_per_sec"], 3), fmt(r["cpu_sec"], 3),
                 fmt(r["cpu_sec_per_gb"], 3), "yes" if r.get("verified") else "NO"]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    pairs = []
    for g in rows:
        if g["executor"] != "gpu" or g.get("skipped"):
            continue
        for c in rows:
            if (c["executor"] == "cpu" and not c.get("skipped")
                    and value_label(c) == value_label(g) and c["num"] == g["num"]
                    and c.get("env", "mem") == g.get("env", "mem")):
                pairs.append((g, c))
    if pairs:
        out.append("GPU executor against the CPU executor (same job): speed-up = CPU wall / GPU "
                   "wall (issue 4: >= 2 against 16 threads); CPU-seconds ratio = GPU CPU s / CPU "
                   "CPU s (issue 4: <= 0.1). A host-reference device is not a GPU.")
        out.append("")
        out.append("| value B | GPU device | CPU threads | speed-up | CPU-seconds ratio |")
        out.append("|---|---|---|---|---|")
        for g, c in pairs:
            out.append(f"| {value_label(g)} | {g.get('device', '')} | {c['threads']} | "
                       f"{ratio(c['seconds'], g['seconds'])} | {ratio(g['cpu_sec'], c['cpu_sec'])} |")
        out.append("")
    stages = sorted({s for r in rows for s in r.get("stage_us", {})})
    if stages:
        out.append("Stage times (ms; the executor's stage_micros, summed over its threads):")
        out.append("")
        out.append("| value B | executor | threads | " + " | ".join(stages) + " |")
        out.append("|" + "---|" * (len(stages) + 3))
        for r in rows:
            if r.get("skipped"):
                continue
            st = r.get("stage_us", {})
            out.append(f"| {value_label(r)} | {r['executor']} | {r['threads']} | " + " | ".join(
                fmt(st[s] / 1000.0, 1) if s in st else "-" for s in stages) + " |")
        out.append("")


def dd_for(row, dds):
    """The dd line measured on row's file system: the last whose dir holds
    the job's directory, else the last one."""
    path = row.get("env", "")[len("disk:"):]
    same = [d for d in dds if path == d.get("dir") or path.startswith(d.get("dir", "").rstrip("/") + "/")]
    pick = same or dds
    return pick[-1] if pick else None


def disk_table(out, rows, dds):
    """Compact runs from files on disk to fsynced files, beside dd."""
    out.append("## End to end: compaction from files on disk to fsynced files")
    out.append("")
    out.append("The compact workload with --compact-dir: inputs read from the file system "
               "(page cache dropped before each run where the kernel allows: `cache dropped`), "
               "outputs written and fsynced there, wall time of the executor's run. "
               "Output GB/s = output bytes / 1e9 / wall; dd GB/s = dd's sequential write rate "
               "on the same file system (8 MiB blocks, the higher of buffered + fdatasync and "
               "O_DIRECT + fdatasync). Issue 4's target: output / dd >= 0.8.")
    out.append("")
    bad = [r for r in rows if not r.get("skipped") and not r.get("verified")]
    if bad:
        out.append("**VERIFICATION FAILED** for: " + ", ".join(
            f"{r['executor']} value {value_label(r)} ({r.get('error', '')})" for r in bad))
        out.append("")
    head = ["value B", "executor", "device", "files", "cache dropped", "input MB", "output MB",
            "wall s", "output GB/s", "dd GB/s", "output/dd", "verified"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for r in rows:
        if r.get("skipped"):
            out.append(f"| {value_label(r)} | {r['executor']} | skipped: {r['skipped']} |"
                       + " |" * (len(head) - 3))
            continue
        dd = dd_for(r, dds)
        dd_rate = dd.get("dd_gb_per_sec") if dd else None
        where = r["env"][len("disk:"):] + (f" ({r['fs_type']})" if r.get("fs_type") else "")
        cells = [value_label(r), r["executor"], r.get("device", ""), where,
                 "yes" if r.get("cache_dropped") else
                 f"no ({fmt(r.get('input_cached_bytes', 0) / 1e6, 1)} MB cached)",
                 fmt(r["input_bytes"] / 1e6, 1), fmt(r["output_bytes"] / 1e6, 1),
                 fmt(r["seconds"], 3), fmt(r["output_gb_per_sec"], 3), fmt(dd_rate, 3),
                 ratio(r["output_gb_per_sec"], dd_rate), "yes" if r.get("verified") else "NO"]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    for d in dds:
        out.append(f"dd on {d.get('dir')} ({d.get('fs_type', '?')}): "
                   f"buffered + fdatasync `{d.get('fdatasync_line', '')}`; "
                   f"O_DIRECT + fdatasync `{d.get('direct_line', '')}`.")
        out.append("")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    all_rows = load_results(sys.argv[1])
    with open(sys.argv[2]) as f:
        env = json.load(f)
    compact = [r for r in all_rows
               if r.get("workload") == "compact" and not r.get("env", "mem").startswith("disk:")]
    disk = [r for r in all_rows
            if r.get("workload") == "compact" and r.get("env", "mem").startswith("disk:")]
    dds = [r for r in all_rows if r.get("workload") == "dd"]
    rows = [r for r in all_rows if r.get("workload") not in ("compact", "dd")]
    engines = []
    workloads = []
    table = {}
    for r in rows:
        if r["engine"] not in engines:
            engines.append(r["engine"])
        if r["workload"] not in workloads:
            workloads.append(r["workload"])
        r["peak_rss_mib"] = r.get("peak_rss_bytes", 0) / 1048576.0
        table[(r["engine"], r["workload"])] = r

    out = []
    out.append(f"# accelkv-bench results: {env.get('date', '?')} on {env.get('machine', '?')}")
    out.append("")
    out.append("## Machine")
    out.append("")
    for key in ("cpu", "cores", "memory", "disk", "gpu", "os", "kernel"):
        if key in env:
            out.append(f"- **{key}**: {env[key]}")
    out.append("")
    out.append("## Command")
    out.append("")
    out.append("```sh")
    for cmd in env.get("commands", []):
        out.append(cmd)
    out.append("```")
    out.append("")
    if env.get("git"):
        out.append(f"Source revision: `{env['git']}`.")
        out.append("")
    if compact:
        compact_table(out, compact)
    if disk:
        disk_table(out, disk, dds)
    if not rows:
        print("\n".join(out))
        return
    unverified = [r for r in rows if not r.get("verified")]
    if unverified:
        out.append("**VERIFICATION FAILED** for: " +
                   ", ".join(f"{r['engine']} {r['workload']} ({r.get('error', '')})"
                             for r in unverified))
    else:
        out.append(f"Every read of every run was verified ({len(rows)} workload runs).")
    out.append("")
    has_accel = "accelkv" in engines
    if not has_accel:
        out.append("AccelKV was not part of this run, so the ratio columns are empty.")
        out.append("")

    def metric_table(title, key, digits, note):
        out.append(f"## {title}")
        out.append("")
        out.append(note)
        out.append("")
        head = ["workload"] + engines + ["AccelKV/RocksDB", "AccelKV/LevelDB"]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for w in workloads:
            vals = {e: table.get((e, w), {}).get(key) for e in engines}
            cells = [w] + [fmt(vals[e], digits) for e in engines]
            cells.append(ratio(vals.get("accelkv"), vals.get("rocksdb")))
            cells.append(ratio(vals.get("accelkv"), vals.get("leveldb")))
            out.append("| " + " | ".join(cells) + " |")
        out.append("")

    metric_table("Throughput (ops/s)", "ops_per_sec", 0, "Higher is better.")
    metric_table("Latency p50 (us)", "lat_us_p50", 2, "Lower is better.")
    metric_table("Latency p99 (us)", "lat_us_p99", 2, "Lower is better.")
    metric_table("Latency p99.9 (us)", "lat_us_p999", 2, "Lower is better.")
    metric_table("Write amplification", "write_amp", 2,
                 "Bytes the process wrote to storage (/proc/self/io write_bytes, including the "
                 "compaction the workload left behind) over key+value bytes written. Lower is "
                 "better; '-' for read-only workloads.")
    metric_table("Space amplification", "space_amp", 2,
                 "Database directory bytes over live key+value bytes after the workload. "
                 "Lower is better.")
    metric_table("CPU seconds per million operations", "cpu_sec_per_mop", 2,
                 "User+system CPU of the process (stress threads excluded). Lower is better.")
    metric_table("Peak RSS (MiB)", "peak_rss_mib", 1, "Peak resident memory during the workload.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
