// The POSIX Env's random-access files: pread(2) on a descriptor, or a
// read-only mmap(2) of the whole file, bounded by a limit on the number of
// live mappings (LevelDB's PosixMmapReadableFile and Limiter). Internal to
// src/env/; tests reach it to exercise the limit.
//
// Thread safety: MmapLimiter and the files' Read are safe for concurrent use.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "accelkv/env.h"

namespace accelkv {

// Hands out up to max_acquires slots (one per live mapping).
class MmapLimiter {
 public:
  explicit MmapLimiter(int max_acquires) : available_(max_acquires) {}
  MmapLimiter(const MmapLimiter&) = delete;
  MmapLimiter& operator=(const MmapLimiter&) = delete;

  // True if a slot was taken; false at the limit.
  bool Acquire();
  // Returns a slot taken by Acquire.
  void Release() { available_.fetch_add(1, std::memory_order_relaxed); }
  int available() const { return available_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> available_;
};

// The PosixEnv's limit on live mappings: 1000 on 64-bit (LevelDB's default;
// each mapping costs address space, not memory), 0 on 32-bit (never map).
int DefaultMmapLimit();

// Opens fname for random access. With use_mmap and a free slot in limiter,
// the whole file is mapped read-only and the descriptor closed at once (a
// mapping holds no file descriptor); Read then returns pointers into the
// mapping, and the slot is returned when the file is destroyed. An empty
// file, a full limiter or a failed mmap fall back to a pread file. Both kinds
// answer a read past the end of the file with the bytes that exist (possibly
// none) and OK.
Status NewPosixRandomAccessFile(const std::string& fname, bool use_mmap, MmapLimiter* limiter,
                                std::unique_ptr<RandomAccessFile>* result);

}  // namespace accelkv
