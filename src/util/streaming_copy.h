// Bulk copies that bypass the CPU caches: non-temporal (streaming) stores
// write the destination's cache lines whole, so the core neither reads them
// for ownership first nor keeps them in its caches. For copies too large to
// be read back from the caches anyway, such as the GPU executor's 2-4 MiB
// pieces of tables in the in-memory Env (env/mem_env.cc).
//
// Measured on the H100 machine's 16 cores (Xeon, model 207; glibc's
// non-temporal threshold there is 151 MiB, so memcpy of these sizes uses rep
// movsb), 256 MiB copied in 64 KiB pieces on 16 threads, medians of three
// calls on two machine starts (bench/results/2026-11-27-h100-streaming-copy.md):
// pinned into ordinary pages 42.2-44.6 GB/s by memcpy, 51.2-55.0 by
// streaming stores; ordinary pages into pinned ones 39.8-54.2 against
// 51.6-56.4.

#pragma once

#include <cstddef>

namespace accelkv {

// The in-memory Env streams copies of at least this many bytes: pieces of
// whole files, which nobody reads back through this core's caches, rather
// than a table's blocks (4-64 KiB), which the reader parses right away.
inline constexpr size_t kStreamingCopyMinBytes = size_t{256} << 10;

// Copies n bytes from src to dst (not overlapping), as memcpy does, with
// non-temporal stores where the CPU has them (x86-64: SSE2) and memcpy
// elsewhere. The stores are fenced before it returns, so the bytes are
// visible to other threads as after memcpy.
void StreamingCopy(char* dst, const char* src, size_t n);

}  // namespace accelkv
