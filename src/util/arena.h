// Arena: bump allocation for a memtable; everything is freed at once when the
// arena dies. Allocate is single-threaded (the memtable writer);
// MemoryUsage may be read concurrently.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace accelkv {

class Arena {
 public:
  Arena() = default;
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

  size_t MemoryUsage() const { return memory_usage_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kBlockSize = 4096;
  char* AllocateFallback(size_t bytes);
  char* AllocateNewBlock(size_t block_bytes);

  char* alloc_ptr_ = nullptr;
  size_t alloc_bytes_remaining_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::atomic<size_t> memory_usage_{0};
};

}  // namespace accelkv
