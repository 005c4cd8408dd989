# Does cudaSetDeviceFlags(BlockingSync) take effect after the context exists
# (made by a pinned allocation, as the compact benchmark's page-locked
# in-memory Env makes it before any executor), and does a wait then spin?
# CPU seconds of the waiting thread for a 2 GiB host-to-device copy, before
# and after. Run: python3 bench/results/2026-11-28-h100-device-flags.py
import ctypes, glob, os, site, time
cands = glob.glob("/usr/local/cuda*/lib64/libcudart.so*")
for d in site.getsitepackages():
    cands += glob.glob(d + "/nvidia/cuda_runtime/lib/libcudart.so*")
print("candidates", cands[:6])
rt = ctypes.CDLL(cands[0])
def flags():
    f = ctypes.c_uint(0)
    r = rt.cudaGetDeviceFlags(ctypes.byref(f))
    return r, hex(f.value)
n = 2 << 30
h = ctypes.c_void_p(); d = ctypes.c_void_p(); s = ctypes.c_void_p()
print("hostalloc", rt.cudaHostAlloc(ctypes.byref(h), ctypes.c_size_t(n), 0))
print("flags after context", flags())
print("malloc", rt.cudaMalloc(ctypes.byref(d), ctypes.c_size_t(n)))
print("stream", rt.cudaStreamCreate(ctypes.byref(s)))
def wait_cpu():
    rt.cudaMemcpyAsync(d, h, ctypes.c_size_t(n), 1, s)
    c0, w0 = time.thread_time(), time.perf_counter()
    rt.cudaStreamSynchronize(s)
    return round((time.thread_time() - c0) * 1e3, 2), round((time.perf_counter() - w0) * 1e3, 2)
wait_cpu()
print("default flags: wait cpu ms, wall ms", [wait_cpu() for _ in range(3)])
print("setflags", rt.cudaSetDeviceFlags(4 | 8), "lasterr", rt.cudaGetLastError())
print("flags now", flags())
print("blocking sync: wait cpu ms, wall ms", [wait_cpu() for _ in range(3)])
