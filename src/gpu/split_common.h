// Output-table splits on the device (docs/GPU.md, "Table splits"), shared
// bit for bit by the CUDA kernels (encode_kernels.cuh) and the host
// reference (host_key_sort_device.cc).
//
// Inside a subcompaction range the CPU executor finishes an output table
// before the first entry e at which OutputSplitter stops (compaction.h):
// e's user key differs from the entry before it, and either the open
// table's TableBuilder::EstimatedFileSize reaches max_output_file_size or
// the grandparent files passed since the table opened hold more than
// max_grandparent_overlap_bytes. (Subcompaction boundaries split only at a
// range's first entry.) The estimate before e depends only on the table's
// entries [s, e) (s its first), cut into data blocks from s by the block
// boundary rule (docs/FORMAT.md), and on e's own plan entry:
//
//   TableSizeFixedPart(C, |key s|, |key e-1|)    properties block, trailers, footer
//   + sum of the closed blocks' sizes + 5          TableBuilder's offset
//   + the index block's size with key e-1's entry  BlockBuilder::SizeWith
//   + the open block's size (entries up to e-1) + 5
//   + the filter's size + 5 (bloom bits on)        BloomFilterSize(BloomNumLines)
//
// So the device finds a table's end in parallel: the table's blocks cut
// from s (BlockStartsKernel's rule), a record per block of what the state
// sums over it (SplitSums), an exclusive scan of those per table, then a
// thread per block walks its entries (FirstSplitInBlock) and the table ends
// at the least entry found. The next table starts there. The CPU planner
// (output_planner.cc) checks every split against its own rule.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "gpu/plan_common.h"
#include "gpu/tail_common.h"
#include "table/bloom_probe.h"

namespace accelkv {
namespace gpu {

// The split rule of one job (from its Compaction and TableOptions).
struct TableSplitRule {
  uint64_t max_output_file_size;  // Compaction::max_output_file_size
  uint64_t max_grandparent_overlap;
  uint32_t comparator_size;  // the comparator name's (OutputComparatorName)
  int32_t bloom_bits;        // TableOptions::bloom_bits_per_key (<= 0: no filter)
};

// The layout size of a block whose n >= 1 entries have raw_key_bytes of
// full keys sharing prefix bytes, value_bytes of values, keys (values) all
// of one size or not: BlockLayout::ComputeSize (table/block_builder.cc).
ACCELKV_HD inline uint64_t BlockLayoutSize(uint64_t n, uint64_t prefix, uint64_t raw_key_bytes,
                                           uint64_t value_bytes, bool keys_fixed,
                                           bool values_fixed) {
  const uint64_t arrays = (keys_fixed ? 0 : 1) + (values_fixed ? 0 : 1);
  const uint64_t base = prefix + (raw_key_bytes - n * prefix) + value_bytes + kBlockFooterSize;
  const uint64_t narrow = base + 2 * n * arrays;
  return narrow <= 0xffff ? narrow : base + 4 * n * arrays;
}

// BlockLayoutTracker fed by AddSized (table/block_builder.h), for the open
// data block.
struct OpenBlockSizes {
  uint64_t n = 0;
  uint64_t prefix = 0;
  uint64_t raw_key_bytes = 0;
  uint64_t value_bytes = 0;
  uint32_t key_size = 0;  // the first entry's
  uint32_t value_size = 0;
  bool keys_fixed = true;
  bool values_fixed = true;

  ACCELKV_HD void Add(const PlanEntry& e) {
    if (n == 0) {
      prefix = e.key_size;
      key_size = e.key_size;
      value_size = e.value_size;
    } else {
      prefix = e.shared < prefix ? e.shared : prefix;
      keys_fixed = keys_fixed && e.key_size == key_size;
      values_fixed = values_fixed && e.value_size == value_size;
    }
    ++n;
    raw_key_bytes += e.key_size;
    value_bytes += e.value_size;
  }
  ACCELKV_HD uint64_t Size() const {
    return BlockLayoutSize(n, prefix, raw_key_bytes, value_bytes, keys_fixed, values_fixed);
  }
};

// What a table's state sums over some of its closed data blocks, in order:
// the element of the per-table exclusive scan (CombineSplitSums).
struct SplitSums {
  uint64_t data_bytes;       // the blocks with their trailers (TableBuilder's offset)
  uint64_t index_key_bytes;  // their last keys' bytes (the index block's keys)
  uint64_t filter_keys;      // their entries FilterBuilder adds
  uint32_t blocks;
  // The least common prefix of two adjacent index keys among them (the
  // first block's last key with the one before the table's excluded): ~0
  // while no pair.
  uint32_t index_shared;
  uint32_t first_key_size;  // the first block's last key's size (blocks > 0)
  uint32_t min_key_size;    // over their last keys (~0 while none)
  uint32_t max_key_size;    // (0 while none)
};

ACCELKV_HD inline SplitSums EmptySplitSums() {
  SplitSums s;
  s.data_bytes = 0;
  s.index_key_bytes = 0;
  s.filter_keys = 0;
  s.blocks = 0;
  s.index_shared = ~uint32_t{0};
  s.first_key_size = 0;
  s.min_key_size = ~uint32_t{0};
  s.max_key_size = 0;
  return s;
}

// a's blocks, then b's (associative; EmptySplitSums is its identity).
ACCELKV_HD inline SplitSums CombineSplitSums(const SplitSums& a, const SplitSums& b) {
  SplitSums s;
  s.data_bytes = a.data_bytes + b.data_bytes;
  s.index_key_bytes = a.index_key_bytes + b.index_key_bytes;
  s.filter_keys = a.filter_keys + b.filter_keys;
  s.blocks = a.blocks + b.blocks;
  s.index_shared = a.index_shared < b.index_shared ? a.index_shared : b.index_shared;
  s.first_key_size = a.blocks > 0 ? a.first_key_size : b.first_key_size;
  s.min_key_size = a.min_key_size < b.min_key_size ? a.min_key_size : b.min_key_size;
  s.max_key_size = a.max_key_size > b.max_key_size ? a.max_key_size : b.max_key_size;
  return s;
}

// Whether kept entry k is a key FilterBuilder adds to a table starting at
// table_start (its first entry always; else a new user key).
ACCELKV_HD inline bool AddsFilterKey(const PlanEntry& e, uint64_t k, uint64_t table_start) {
  return k == table_start || (e.flags & kPlanSameUserKey) == 0;
}

// The length of the common prefix of a and b, at most limit bytes (both
// hold at least limit).
ACCELKV_HD inline uint32_t CommonPrefix(const uint8_t* a, const uint8_t* b, uint32_t limit) {
  uint32_t i = 0;
  while (i < limit && a[i] == b[i]) ++i;
  return i;
}

// The common prefix of the internal keys of plan entries i and j, at most
// limit bytes. Internal keys in output order are not in byte order (a user
// key that is a prefix of the next is followed by its trailer's bytes), so
// the least PlanEntry::shared between i and j is only a lower bound of it:
// the index block's prefix needs the keys themselves (it is the common
// prefix of the data blocks' last keys, and so the least one of adjacent
// last keys).
ACCELKV_HD inline uint32_t CommonKeyPrefix(const PlanEntry* plan, const uint8_t* key_arena,
                                           uint64_t i, uint64_t j, uint32_t limit) {
  limit = plan[i].key_size < limit ? plan[i].key_size : limit;
  limit = plan[j].key_size < limit ? plan[j].key_size : limit;
  return CommonPrefix(key_arena + plan[i].key_offset, key_arena + plan[j].key_offset, limit);
}

// The sums over a data block of the table starting at table_start, from
// its record (plan_common.h: the device's block plan has them); plan and
// key_arena for its last key's common prefix with the key before it.
ACCELKV_HD inline SplitSums SplitSumsOfRun(const PlanEntry* plan, const uint8_t* key_arena,
                                           const BlockRun& b, uint64_t table_start) {
  const uint64_t n = b.end - b.first;
  const uint32_t prefix = b.min_shared < b.head.key_size ? b.min_shared : b.head.key_size;
  SplitSums s;
  s.data_bytes = BlockLayoutSize(
                     n, prefix, b.head.key_size + b.key_bytes, b.head.value_size + b.value_bytes,
                     (b.flags & kRunKeysOfFirstSize) != 0, (b.flags & kRunValuesOfFirstSize) != 0) +
                 kTrailerBytes;
  s.index_key_bytes = b.last_key_size;
  s.filter_keys = b.filter_keys + (AddsFilterKey(b.head, b.first, table_start) ? 1 : 0);
  s.blocks = 1;
  s.index_shared = b.first == table_start
                       ? ~uint32_t{0}
                       : CommonKeyPrefix(plan, key_arena, b.first - 1, b.end - 1, ~uint32_t{0});
  s.first_key_size = b.last_key_size;
  s.min_key_size = b.last_key_size;
  s.max_key_size = b.last_key_size;
  return s;
}

// The sums over the data block plan[first, end) of the table starting at
// table_start.
ACCELKV_HD inline SplitSums MakeSplitSums(const PlanEntry* plan, const uint8_t* key_arena,
                                          uint64_t first, uint64_t end, uint64_t table_start) {
  return SplitSumsOfRun(plan, key_arena, MakeBlockRun(plan, first, end), table_start);
}

// The index block's size with one more key (key_size bytes, sharing
// `shared` bytes with the last key of the blocks closed, or at least as
// many as their common prefix: closed), each
// entry's value a 16-byte handle: BlockBuilder::SizeWith.
ACCELKV_HD inline uint64_t IndexSizeWith(const SplitSums& closed, uint32_t key_size,
                                         uint32_t shared) {
  uint64_t prefix = key_size;
  bool fixed = true;
  if (closed.blocks > 0) {
    prefix = closed.first_key_size;
    prefix = closed.index_shared < prefix ? closed.index_shared : prefix;
    prefix = shared < prefix ? shared : prefix;
    fixed = closed.min_key_size == closed.max_key_size && key_size == closed.first_key_size;
  }
  const uint64_t n = uint64_t{closed.blocks} + 1;
  return BlockLayoutSize(n, prefix, closed.index_key_bytes + key_size, kHandleBytes * n, fixed,
                         true);
}

// TableSizeFixedPart (table/table_builder.cc): the index block's trailer,
// the properties block with its trailer, the footer.
ACCELKV_HD inline uint64_t TableFixedPart(uint32_t comparator_size, uint32_t smallest_key_size,
                                          uint32_t last_key_size) {
  EncodeTable t{};
  t.comparator_size = comparator_size;
  t.smallest_key_size = smallest_key_size;
  t.largest_key_size = last_key_size;
  return kTrailerBytes + EncodedBlockSize(PropertiesLayout(t)) + kTrailerBytes + kTableFooterBytes;
}

// One data block of a table cut from the table's first entry: entries
// [first, end) (end may be cut short by the searched window's end).
struct SplitBlock {
  uint64_t first;
  uint64_t end;
  uint64_t table_start;  // its table's first entry
  uint64_t range_end;    // its subcompaction range's end
};

// The first entry e in (b.first, b.end], e < b.range_end, before which
// OutputSplitter stops the table, given closed: the sums over the table's
// blocks before b; or ~0 when none. key_arena holds the plan entries'
// keys; grandparent_bytes[g]: the grandparent files [0, g)'s bytes
// (PlanEntry::grandparents indexes it).
ACCELKV_HD inline uint64_t FirstSplitInBlock(const PlanEntry* plan, const uint8_t* key_arena,
                                             const SplitBlock& b, const SplitSums& closed,
                                             const TableSplitRule& rule,
                                             const uint64_t* grandparent_bytes) {
  const uint32_t smallest = plan[b.table_start].key_size;
  const uint64_t overlap_base = grandparent_bytes[plan[b.table_start].grandparents];
  const uint64_t last = b.end < b.range_end ? b.end : b.range_end - 1;
  OpenBlockSizes block;
  uint64_t filter_keys = closed.filter_keys;
  // The least PlanEntry::shared of the open block's entries: a lower bound
  // of its last key's common prefix with the last closed block's.
  uint32_t shared = ~uint32_t{0};
  // The closed blocks' index keys' common prefix.
  uint32_t closed_prefix = closed.first_key_size;
  closed_prefix = closed.index_shared < closed_prefix ? closed.index_shared : closed_prefix;
  uint32_t fixed_key_size = ~uint32_t{0};
  uint64_t fixed_part = 0;
  for (uint64_t e = b.first;; ++e) {
    if (e > b.first) {  // the decision before e: the table holds [table_start, e)
      if (e > last) return ~uint64_t{0};
      const PlanEntry& p = plan[e];
      if ((p.flags & kPlanSameUserKey) == 0) {
        if (grandparent_bytes[p.grandparents] - overlap_base > rule.max_grandparent_overlap) {
          return e;
        }
        const uint32_t last_key = plan[e - 1].key_size;
        if (last_key != fixed_key_size) {
          fixed_key_size = last_key;
          fixed_part = TableFixedPart(rule.comparator_size, smallest, last_key);
        }
        // Only below the closed prefix does the bound differ from the
        // index's: then the keys are read.
        uint32_t index_shared = shared;
        if (closed.blocks > 0 && shared < closed_prefix) {
          index_shared = CommonKeyPrefix(plan, key_arena, b.first - 1, e - 1, closed_prefix);
        }
        uint64_t size = fixed_part + closed.data_bytes +
                        IndexSizeWith(closed, last_key, index_shared) + block.Size() +
                        kTrailerBytes;
        if (rule.bloom_bits > 0) {
          size += BloomFilterSize(BloomNumLines(filter_keys, rule.bloom_bits)) + kTrailerBytes;
        }
        if (size >= rule.max_output_file_size) return e;
      }
      if (e == b.end) return ~uint64_t{0};  // the next block's first entry
    }
    const PlanEntry& p = plan[e];
    block.Add(p);
    filter_keys += AddsFilterKey(p, e, b.table_start) ? 1 : 0;
    shared = p.shared < shared ? p.shared : shared;
  }
}

}  // namespace gpu
}  // namespace accelkv
