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

// Device block plan (docs/GPU.md, "Block plan"): the data blocks the
// device cuts by the prefix-sum rule (docs/FORMAT.md, "Block boundary
// rule"), each subcompaction range taken as one table from its first entry,
// which holds while the range's first output table is open. Per block its
// first entry's PlanEntry and what OutputPlanner::AddRun sums over the rest
// (the run), so the CPU plans a block from one record instead of a
// PlanEntry per entry; the CPU checks each block against its own rule.
inline constexpr uint32_t kRunKeysOfFirstSize = 1;    // BlockRun::flags
inline constexpr uint32_t kRunValuesOfFirstSize = 2;  // BlockRun::flags

struct BlockRun {
  PlanEntry head;            // the block's first entry (output position first)
  uint64_t first;            // its first entry
  uint64_t end;              // one past its last entry
  uint64_t key_bytes;        // the run: entries (first, end)
  uint64_t value_bytes;      // the run's
  uint64_t growth;           // the run's sum of 4 * key_size + value_size
  uint64_t smallest_seqno;   // the run's (~0 when it is empty)
  uint64_t largest_seqno;    // the run's (0 when it is empty)
  uint64_t last_key_offset;  // the block's last entry's key, in the key arena
  uint32_t last_key_size;
  uint32_t last_value_size;
  uint32_t min_shared;         // the run's least PlanEntry::shared (~0 when it is empty)
  uint32_t filter_keys;        // the run's entries without kPlanSameUserKey
  uint32_t deletions;          // the run's tombstones
  uint32_t last_grandparents;  // the block's last entry's PlanEntry::grandparents
  uint32_t last_boundaries;    // and boundaries
  uint32_t
      flags;  // kRunKeysOfFirstSize, kRunValuesOfFirstSize: every run entry's size is the head's
};

// Kept entry k's nominal size (the boundary rule's s_k).
ACCELKV_HD inline uint64_t NominalSize(const PlanEntry& e) {
  return uint64_t{e.key_size} + e.value_size + 8;
}

// The rule itself: a block starts at entry i (not the table's first)
// when floor(P_i / B) != floor(P_{i-1} / B), P the table's nominal prefix
// sums (TableBuilder).
ACCELKV_HD inline bool CrossesBlock(uint64_t prefix_before, uint64_t prefix_at,
                                    uint64_t block_size) {
  return prefix_at / block_size != prefix_before / block_size;
}

// Whether entry i starts a data block of a table whose first entry is
// table_start (<= i): prefix[j] is the exclusive prefix sum of the nominal
// sizes up to j, over any origin.
ACCELKV_HD inline bool StartsBlock(const uint64_t* prefix, uint64_t i, uint64_t table_start,
                                   uint64_t block_size) {
  if (i == table_start) return true;
  const uint64_t base = prefix[table_start];
  return CrossesBlock(prefix[i - 1] - base, prefix[i] - base, block_size);
}

// Calls fn(first, end) for each data block of plan[begin, end), cut as one
// table from begin (the boundary rule, CrossesBlock), in order, until fn
// returns false: the host's walk (host reference, tests).
template <typename Fn>
inline void ForEachBlock(const PlanEntry* plan, uint64_t begin, uint64_t end, uint64_t block_size,
                         Fn&& fn) {
  uint64_t first = begin;
  uint64_t prefix = 0;  // the table's nominal prefix sum at i
  for (uint64_t i = begin + 1; i <= end; ++i) {
    const uint64_t before = prefix;
    prefix += NominalSize(plan[i - 1]);
    if (i < end && !CrossesBlock(before, prefix, block_size)) continue;
    if (!fn(first, i)) return;
    first = i;
  }
}

// The record of the block [first, end) of plan.
ACCELKV_HD inline BlockRun MakeBlockRun(const PlanEntry* plan, uint64_t first, uint64_t end) {
  BlockRun b;
  b.head = plan[first];
  b.first = first;
  b.end = end;
  b.key_bytes = 0;
  b.value_bytes = 0;
  b.growth = 0;
  b.smallest_seqno = ~uint64_t{0};
  b.largest_seqno = 0;
  b.min_shared = ~uint32_t{0};
  b.filter_keys = 0;
  b.deletions = 0;
  b.flags = kRunKeysOfFirstSize | kRunValuesOfFirstSize;
  for (uint64_t j = first + 1; j < end; ++j) {
    const PlanEntry& p = plan[j];
    b.key_bytes += p.key_size;
    b.value_bytes += p.value_size;
    b.growth += 4 * uint64_t{p.key_size} + p.value_size;
    const uint64_t sequence = p.trailer >> 8;
    b.smallest_seqno = sequence < b.smallest_seqno ? sequence : b.smallest_seqno;
    b.largest_seqno = sequence > b.largest_seqno ? sequence : b.largest_seqno;
    b.min_shared = p.shared < b.min_shared ? p.shared : b.min_shared;
    b.filter_keys += (p.flags & kPlanSameUserKey) == 0;
    b.deletions += (p.trailer & 0xff) == 0;  // ValueType::kDeletion
    if (p.key_size != b.head.key_size) b.flags &= ~kRunKeysOfFirstSize;
    if (p.value_size != b.head.value_size) b.flags &= ~kRunValuesOfFirstSize;
  }
  const PlanEntry& last = plan[end - 1];
  b.last_key_offset = last.key_offset;
  b.last_key_size = last.key_size;
  b.last_value_size = last.value_size;
  b.last_grandparents = last.grandparents;
  b.last_boundaries = last.boundaries;
  return b;
}

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
