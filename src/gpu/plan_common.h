// Plan inputs, shared bit for bit by the CUDA kernel (PlanKernel,
// encode_kernels.cuh) and the host reference (host_key_sort_device.cc).
//
// After the sort and the obsolete-version filter, the CPU plans the output
// tables (output_planner.cc: which kept entry goes to which table and data
// block, by TableBuilder's and OutputSplitter's rules). Walking the kept
// entries in key order over the key arena costs a cache miss or more per
// entry (the kept order interleaves every input file), so the device first
// computes, per kept entry and in output order, all the plan reads of it
// into one dense array (PlanEntry): its sizes, its trailer, the common
// prefix with the previous kept key, whether that key has the same user
// key, and OutputSplitter's
// two key comparisons as counts (grandparent files whose largest key is
// below it, subcompaction boundaries at or below its user key; both lists
// are ascending, so the splitter's forward scans stop exactly at those
// counts: OutputSplitter::ShouldStopBeforeCounted). The CPU then reads a
// key only where a table or a data block ends, and finds it through the
// entry's key_offset here: through the kept order and the per-entry arrays
// (random: the kept order interleaves the input files) it took three
// dependent loads per data block end, 44% of the planner's samples (perf,
// 32-byte values).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "gpu/key_sort_common.h"

namespace accelkv {
namespace gpu {

inline constexpr uint32_t kPlanSameUserKey = 1;  // PlanEntry::flags

// What the CPU plan reads of kept entry k (output position k).
struct PlanEntry {
  uint64_t trailer;   // sequence << 8 | type
  uint32_t key_size;  // the internal key's
  uint32_t value_size;
  uint32_t shared;        // common prefix with kept entry k - 1's internal key (0 for k = 0)
  uint32_t grandparents;  // grandparent files whose largest internal key < this key
  uint32_t boundaries;    // subcompaction boundaries <= this user key
  uint32_t flags;         // kPlanSameUserKey: k > 0 and kept entry k - 1 has its user key
  uint64_t key_offset;    // the internal key's, in the key arena
};

// Internal-key order (user key bytewise ascending, trailer descending).
// REQUIRES: na, nb >= 8.
ACCELKV_HD inline int CompareInternalKeys(const uint8_t* a, uint64_t na, const uint8_t* b,
                                          uint64_t nb) {
  const int r = CompareBytes(a, na - 8, b, nb - 8);
  if (r != 0) return r;
  const uint64_t ta = LoadFixed64(a + na - 8);
  const uint64_t tb = LoadFixed64(b + nb - 8);
  return ta > tb ? -1 : (ta < tb ? 1 : 0);
}

// The number of keys of `list` (ascending internal keys) below key.
ACCELKV_HD inline uint32_t CountInternalBelow(const KeyListView& list, const uint8_t* key,
                                              uint64_t size) {
  uint32_t lo = 0;
  uint32_t hi = list.n;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const uint64_t b = list.offsets[mid];
    if (CompareInternalKeys(list.bytes + b, list.offsets[mid + 1] - b, key, size) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The number of keys of `list` (ascending user keys) <= user_key.
ACCELKV_HD inline uint32_t CountUserAtOrBelow(const KeyListView& list, const uint8_t* user_key,
                                              uint64_t size) {
  uint32_t lo = 0;
  uint32_t hi = list.n;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const uint64_t b = list.offsets[mid];
    if (CompareBytes(list.bytes + b, list.offsets[mid + 1] - b, user_key, size) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Kept entry k's PlanEntry: kept[k] indexes the key arrays and value_size.
ACCELKV_HD inline PlanEntry MakePlanEntry(const KeyArrays& keys, const uint32_t* value_size,
                                          const uint32_t* kept, uint64_t k,
                                          const KeyListView& grandparents,
                                          const KeyListView& boundaries) {
  const uint32_t i = kept[k];
  const uint8_t* key = keys.key(i);
  const uint32_t size = keys.key_size[i];
  PlanEntry p;
  p.trailer = keys.trailer(i);
  p.key_offset = keys.key_offset[i];
  p.key_size = size;
  p.value_size = value_size[i];
  p.shared = 0;
  p.flags = 0;
  if (k > 0) {
    const uint32_t prev = kept[k - 1];
    const uint8_t* pkey = keys.key(prev);
    const uint32_t psize = keys.key_size[prev];
    const uint32_t n = psize < size ? psize : size;
    uint32_t s = 0;
    while (s < n && pkey[s] == key[s]) ++s;
    p.shared = s;
    if (psize == size && s >= size - 8) p.flags |= kPlanSameUserKey;
  }
  p.grandparents = CountInternalBelow(grandparents, key, size);
  p.boundaries = CountUserAtOrBelow(boundaries, key, size - 8);
  return p;
}

// The first output position k < n whose plan[k].boundaries >= b (n when
// none): where subcompaction range b starts (boundaries ascend with the
// output order). KeySortOutput::boundary_starts holds it for each b.
ACCELKV_HD inline uint64_t BoundaryStart(const PlanEntry* plan, uint64_t n, uint32_t b) {
  uint64_t lo = 0;
  uint64_t hi = n;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (plan[mid].boundaries < b) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace gpu
}  // namespace accelkv
