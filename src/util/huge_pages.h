// Anonymous memory for transparent huge pages: 2 MiB aligned (huge pages map
// only there) and marked madvise(MADV_HUGEPAGE), a hint: the kernel backs it
// with ordinary pages where it has no huge ones. Used by the memtable's
// arena blocks (util/arena.cc), the GPU executor's pinned host buffers
// (gpu/pinned_buffer.cu) and the benchmark's per-key state
// (bench/key_state.cc).
#pragma once

#include <cstddef>

namespace accelkv {

inline constexpr size_t kHugePageSize = size_t{2} << 20;

// size bytes (a multiple of kHugePageSize) of zeroed anonymous memory at a
// kHugePageSize-aligned address, or nullptr if mmap fails. Free with
// munmap(p, size).
char* MapHugePages(size_t size);

}  // namespace accelkv
