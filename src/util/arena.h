// Arena: bump allocation for a memtable; everything is freed at once when the
// arena dies. Allocate is single-threaded (the memtable writer);
// MemoryUsage may be read concurrently.
//
// Blocks are kDefaultBlockSize (4 KiB, malloc) unless the constructor asks
// for huge blocks: then each block is kHugeBlockSize (2 MiB) of anonymous
// memory aligned to 2 MiB and marked for transparent huge pages
// (madvise(MADV_HUGEPAGE), a hint: ordinary pages where the kernel has
// none), and up to 64 MiB of dead arenas' huge blocks are kept for new ones
// while any huge arena lives. A memtable's skiplist search visits nodes
// scattered over tens of MiB; with 4 KiB pages most visits also miss the
// TLB, and one 2 MiB page maps what 512 ordinary pages do.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

#include "util/huge_pages.h"

namespace accelkv {

class Arena {
 public:
  static constexpr size_t kDefaultBlockSize = 4096;
  static constexpr size_t kHugeBlockSize = kHugePageSize;

  explicit Arena(bool huge_blocks = false);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // REQUIRES: bytes > 0
  char* Allocate(size_t bytes) {
    if (bytes <= alloc_bytes_remaining_) {
      char* result = alloc_ptr_;
      alloc_ptr_ += bytes;
      alloc_bytes_remaining_ -= bytes;
      return result;
    }
    return AllocateFallback(bytes);
  }
  // Aligned to alignof(std::max_align_t) (at least 8).
  char* AllocateAligned(size_t bytes);

  // Bytes of the blocks allocated so far (whole blocks).
  size_t MemoryUsage() const { return memory_usage_.load(std::memory_order_relaxed); }

  // Huge blocks of dead arenas kept for new ones, process-wide (arena.cc):
  // none once no huge arena lives. For tests.
  static size_t CachedHugeBlocks();

 private:
  struct Block {
    char* data;
    size_t size;
    bool mapped;  // munmap, not delete[]
  };

  char* AllocateFallback(size_t bytes);
  char* AllocateNewBlock(size_t block_bytes);

  const size_t block_size_;
  const bool huge_;
  char* alloc_ptr_ = nullptr;
  size_t alloc_bytes_remaining_ = 0;
  std::vector<Block> blocks_;
  std::atomic<size_t> memory_usage_{0};
};

}  // namespace accelkv
