# Off-CPU sampler: per thread, scheduler counters over [t1, t2] seconds after
# start (run, run-queue wait, voluntary/involuntary switches) and, every
# 10 ms, the thread's state and wchan (where a sleeping thread sleeps) and the
# CPU it last ran on (stat field 39; 2026-11-26, second session: whether the
# writers share few CPUs).
import collections, os, sys, time
pid, t1, t2 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
base = f"/proc/{pid}/task"
def rd(p):
    try:
        return open(p).read()
    except Exception:
        return None
def snap():
    d = {}
    for tid in os.listdir(base):
        s = rd(f"{base}/{tid}/schedstat")
        if s:
            d[tid] = list(map(int, s.split()))
    return d
time.sleep(t1)
a = snap(); ta = time.time()
states = collections.defaultdict(collections.Counter)
cpus = collections.defaultdict(collections.Counter)
n = 0
while time.time() - ta < t2 - t1:
    for tid in os.listdir(base):
        st = rd(f"{base}/{tid}/stat")
        if not st:
            continue
        rest = st[st.rindex(")") + 2:].split()
        state = rest[0]
        cpus[tid][int(rest[36])] += 1
        w = rd(f"{base}/{tid}/wchan") or "?"
        states[tid][state if state == "R" else state + ":" + w] += 1
    n += 1
    time.sleep(0.01)
b = snap(); w = time.time() - ta
print(f"# interval {w:.1f}s, {n} samples; run_s wait_rq_s slices comm tid: states (share)")
rows = []
for tid in b:
    if tid in a:
        x = [b[tid][i] - a[tid][i] for i in range(3)]
        rows.append((x[0] / 1e9, x[1] / 1e9, x[2], tid))
rows.sort(reverse=True)
for r in rows:
    if r[0] < 0.05:
        continue
    comm = (rd(f"{base}/{r[3]}/comm") or "?").strip()
    tot = sum(states[r[3]].values()) or 1
    top = ", ".join(f"{k} {v / tot:.2f}" for k, v in states[r[3]].most_common(5))
    print("%7.2f %7.2f %8d %-16s %s: %s" % (r[0], r[1], r[2], comm, r[3], top))
    ctot = sum(cpus[r[3]].values()) or 1
    print("        cpus: " + ", ".join(f"{c} {v / ctot:.2f}" for c, v in cpus[r[3]].most_common(6)))
