// PinnedPool: page-locked host memory shared by the GPU executors of one
// process. Each database opens its own executor (a hash-partitioned store
// opens several), and each executor's device kept its large pinned buffers
// (the file arena, the key arena, the output buffer, the plan) for itself,
// each grown to that executor's largest job: with 8 partitions the process
// held about 11 GB more than with the CPU executor, pinned whether or not
// any job ran (bench/results/2026-11-27-h100-partitions-db.md). Through the
// pool a device gives its buffers' regions back when a job ends
// (PinnedBuffer::Release) and the next job of any executor takes them
// again, so the process pins about what its concurrent jobs need at most,
// not the sum of every executor's largest job. A single executor takes its
// own regions back job after job, as before: pinning costs CPU time in
// proportion to the bytes (pinned_buffer.h).
//
// Policy:
// - Take(min, want) returns the smallest free region of at least want
//   bytes (a PinnedBuffer's own size, the most it ever needed: in a single
//   executor its region of the last job), else the smallest of at least
//   min bytes, a region serving neither when it is larger than 4 MiB and
//   more than kMaxSlack times the bytes asked for (a small buffer must not
//   hold a large region another buffer will need). When neither serves,
//   it maps a new one of want bytes (min bytes when want cannot
//   be mapped), first unmapping free regions so that no more is mapped
//   than the most bytes ever in use at once, the new region counted in
//   use: first the largest of those too small for the need (the region a
//   growing buffer just left), so stale regions do not pile up beside
//   their successors. (Asked by min alone, a small job's buffers took one
//   another's regions and each miss unmapped a region a later buffer of
//   the same job needed: in the database with 16 subcompactions the pool
//   pinned 39.7 GiB for 19.7 GiB compacted, 289 regions in 107 jobs,
//   against 3.8 GiB and 28 regions with want first:
//   bench/results/2026-11-28-h200-final-check.md.)
// - Give keeps a region for later Takes. While everything mapped (in use
//   and free) exceeds the most bytes ever in use at once, it unmaps the
//   smallest free regions: those a grown buffer left behind. So once its
//   jobs are back the pool holds at most its busiest moment's bytes, and
//   a buffer's current region stays.
//
// The mapping functions are parameters (tests use ordinary memory); the
// CUDA build's process-wide pool maps with PinnedMap (pinned_buffer.h).
//
// Thread safety: safe for concurrent use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "util/thread_annotations.h"

namespace accelkv {
namespace gpu {

class PinnedPool {
 public:
  struct Memory {
    void* (*map)(size_t bytes) = nullptr;  // nullptr when it cannot
    void (*unmap)(void* p, size_t bytes) = nullptr;
  };
  struct Region {
    void* p = nullptr;
    size_t bytes = 0;
  };
  struct Stats {
    uint64_t pinned_bytes = 0;       // mapped now: in use or free
    uint64_t peak_pinned_bytes = 0;  // the most mapped at once
    uint64_t free_bytes = 0;         // mapped and not in use
    uint64_t maps = 0;               // regions mapped so far
    uint64_t mapped_bytes = 0;       // their bytes, in all (pinning costs CPU by the byte)
  };
  // A region more than this many times the bytes asked for is not handed
  // out for them, unless it is at most kSmallRegion.
  static constexpr size_t kMaxSlack = 4;
  static constexpr size_t kSmallRegion = size_t{4} << 20;

  explicit PinnedPool(Memory memory) : memory_(memory) {}
  ~PinnedPool();  // unmaps the free regions (regions in use must be back)
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

  // A region of at least min_bytes (min_bytes <= want_bytes); {nullptr, 0}
  // when none could be mapped.
  Region Take(size_t min_bytes, size_t want_bytes) EXCLUDES(mu_);
  // Gives back a region from Take (p nullptr: nothing).
  void Give(Region region) EXCLUDES(mu_);
  // The buffers drawing on the pool (PinnedBuffer) attach when made and
  // detach when destroyed, after giving their regions back. When the last
  // one detaches, the free regions are unmapped: a process that closed its
  // databases keeps no pinned memory.
  void Attach() EXCLUDES(mu_);
  void Detach() EXCLUDES(mu_);
  Stats GetStats() const EXCLUDES(mu_);

 private:
  void Unmap(Region region);
  // The index of the smallest free region of at least `bytes` that the
  // slack rule allows for them (kMaxSlack), or free_.size() when none.
  size_t BestFit(size_t bytes) const REQUIRES(mu_);
  // Takes a free region out of the free list.
  Region PopFree(std::vector<Region>::iterator it) REQUIRES(mu_);
  // Counts bytes taken into use (and the busiest moment's).
  void AddInUse(uint64_t bytes) REQUIRES(mu_);
  // Takes free regions into *unmap (to be unmapped outside the lock) until
  // at most limit bytes stay mapped or none is free: first those under
  // `below` bytes, largest first, then the rest, smallest first.
  void EvictFreeOver(uint64_t limit, size_t below, std::vector<Region>* unmap) REQUIRES(mu_);

  const Memory memory_;
  mutable std::mutex mu_;
  std::vector<Region> free_ GUARDED_BY(mu_);
  uint64_t in_use_ GUARDED_BY(mu_) = 0;
  uint64_t peak_in_use_ GUARDED_BY(mu_) = 0;
  uint64_t users_ GUARDED_BY(mu_) = 0;
  Stats stats_ GUARDED_BY(mu_);
};

}  // namespace gpu
}  // namespace accelkv
