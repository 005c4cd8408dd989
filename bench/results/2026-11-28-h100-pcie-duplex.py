# Simultaneous H2D and D2H copies over PCIe: each alone, then both at once
# (pinned host buffers, separate streams), 256 MB each, median of 5.
import json, sys, time, torch
n = 256 << 20
h_in = torch.empty(n, dtype=torch.uint8).pin_memory()
h_out = torch.empty(n, dtype=torch.uint8).pin_memory()
d_in = torch.empty(n, dtype=torch.uint8, device="cuda")
d_out = torch.ones(n, dtype=torch.uint8, device="cuda")
s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
def run(h2d, d2h):
    torch.cuda.synchronize()
    t = time.perf_counter()
    if h2d:
        with torch.cuda.stream(s1): d_in.copy_(h_in, non_blocking=True)
    if d2h:
        with torch.cuda.stream(s2): h_out.copy_(d_out, non_blocking=True)
    torch.cuda.synchronize()
    return time.perf_counter() - t
res = {}
for name, a, b in (("h2d", 1, 0), ("d2h", 0, 1), ("both", 1, 1)):
    run(a, b)
    ts = sorted(run(a, b) for _ in range(7))
    t = ts[3]
    res[name] = {"ms": round(t * 1e3, 3), "GB_per_s_each": round(n / t / 1e9, 2)}
res["both"]["GB_per_s_total"] = round(2 * n / (res["both"]["ms"] / 1e3) / 1e9, 2)
print(json.dumps(res))
