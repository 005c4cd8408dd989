// KeySortDevice: the accelerator half of the GPU compaction pipeline. Given
// the job's input table files in one host arena (the file arena), every
// entry's internal key materialized in a second one (the key arena: the
// block format stores keys as a block prefix plus suffixes, so keys are not
// contiguous in the files) and the blocks to checksum, it verifies every
// block's CRC32C, orders the entries into internal-key order and applies the
// obsolete-version rule, returning the indices of the kept entries in output
// order. Only keys move through the sort; values stay in the file arena.
// In device-encode mode it then fills the output data blocks (EncodeBlocks,
// in chunks of tables) from the two arenas it still holds, until
// ReleaseEncodeInput.
//
// Implementations: CudaKeySortDevice (cuda_key_sort_device.cu, CUB merge
// sort + select) and HostKeySortDevice (the CPU reference running the same
// key_sort_common.h / encode_common.h functions; used by tests everywhere
// and as the oracle for the CUDA one).
//
// Errors: Corruption for a checksum mismatch or a duplicated internal key;
// Aborted("gpu: <stage>: ...") for any device failure, including injected
// ones (SetInjectedFailure), after which the device is still usable when
// the failure was transient.
//
// Thread safety: one job at a time per device (the executor serializes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "accelkv/slice.h"
#include "accelkv/status.h"
#include "gpu/decode_common.h"
#include "gpu/encode_common.h"
#include "gpu/gpu_executor.h"
#include "gpu/host_vector.h"
#include "gpu/key_sort_common.h"
#include "gpu/pinned_pool.h"
#include "gpu/plan_common.h"
#include "gpu/split_common.h"
#include "gpu/tail_common.h"

namespace accelkv {
namespace gpu {

// An ascending list of keys in one byte array (KeyListView's host side).
struct KeyList {
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offsets{0};  // size() + 1 entries

  void Add(const uint8_t* key, uint64_t size) {
    bytes.insert(bytes.end(), key, key + size);
    offsets.push_back(bytes.size());
  }
  uint32_t size() const { return static_cast<uint32_t>(offsets.size() - 1); }
  void Clear() {
    bytes.clear();
    offsets.assign(1, 0);
  }
  KeyListView View() const { return KeyListView{bytes.data(), offsets.data(), size()}; }
};

struct KeySortInput {
  const uint8_t* arena = nullptr;  // file arena, from HostArena(); arena_size bytes
  uint64_t arena_size = 0;
  const uint8_t* key_arena = nullptr;  // from HostKeyArena(); key_arena_size bytes
  uint64_t key_arena_size = 0;
  HostVector<BlockSpan> blocks;  // blocks to checksum (file arena)
  // The largest of blocks' sizes, where known (DecodeInputTables); ~0:
  // unknown. The CUDA device lists the blocks its large-block verify takes
  // only when it may find one.
  uint64_t max_block_size = ~uint64_t{0};
  HostVector<uint64_t> key_offset;  // per entry, into the key arena
  HostVector<uint32_t> key_size;    // per entry, >= 8
  // Per entry, kFlagOutOfRange; empty: no entry is flagged (a job run
  // whole, whose flags would all be 0: the CUDA device clears them on the
  // device rather than filling and uploading n bytes).
  HostVector<uint8_t> flags;
  std::vector<uint64_t> snapshots;  // ascending, distinct
  // The deeper levels' file ranges (DeeperLevelsView: the dedup asks
  // IsBaseLevelKey of a tombstone there, on the device).
  KeyList deeper_smallest;
  KeyList deeper_largest;
  std::vector<uint32_t> deeper_level_end;
  // The internal-key size every entry has, or 0 when sizes differ (from the
  // blocks' layouts: DecodeInputTables). The CUDA device radix-sorts jobs
  // whose user keys are all one length of at most 16 bytes.
  uint32_t fixed_key_size = 0;
  // Device-encode mode: Run also computes the plan inputs
  // (KeySortOutput::plan, plan_common.h) and keeps both arenas, the entry
  // arrays and the kept order on the device after it returns OK, for the
  // EncodeBlocks calls that follow (until ReleaseEncodeInput).
  bool keep_for_encode = false;
  // With keep_for_encode: per entry, its value in the file arena (required:
  // num_entries() each, unless DecodeKeys left them on the device, which
  // the CUDA device then uses instead), the grandparent files' largest internal keys and the
  // subcompaction boundaries (user keys), both ascending.
  const HostVector<uint64_t>* value_offset = nullptr;
  const HostVector<uint32_t>* value_size = nullptr;
  KeyList grandparents;
  KeyList boundaries;
  // With keep_for_encode: the output tables' block size, with which Run
  // also cuts the data blocks (KeySortOutput::runs); 0: it does not.
  uint64_t plan_block_size = 0;
  // With plan_block_size: whether Run also splits each subcompaction range
  // into output tables by the split rule (split_common.h; docs/GPU.md,
  // "Table splits": KeySortOutput::table_starts) and cuts every table's
  // data blocks from its first entry; else it cuts each range as one table.
  // grandparent_bytes[g]: the bytes of grandparent files [0, g) (one more
  // than grandparents holds), what the rule's overlap sums.
  bool split_tables = false;
  TableSplitRule split{};
  std::vector<uint64_t> grandparent_bytes{0};
  // The CUDA device searches a table's blocks for its split in windows of
  // about twice the range's previous table's entries, at least this many
  // (a window without the split doubles; docs/GPU.md, "Table splits").
  uint64_t split_window = 64 << 10;

  uint64_t num_entries() const { return key_offset.size(); }
  // Whether the split rule's inputs are there: split_tables and
  // plan_block_size (the tables' block size) set, a grandparent_bytes entry
  // per grandparent and one more.
  bool SplitInputsOk() const {
    return split_tables && plan_block_size > 0 &&
           grandparent_bytes.size() == uint64_t{grandparents.size()} + 1;
  }
  // The deeper levels over the host's lists.
  DeeperLevelsView DeeperView() const {
    return DeeperLevelsView{deeper_smallest.View(), deeper_largest.View(), deeper_level_end.data(),
                            static_cast<uint32_t>(deeper_level_end.size())};
  }
  // OK unless flags is neither empty nor num_entries() long
  // (InvalidArgument).
  Status CheckFlags() const {
    if (flags.empty() || flags.size() == num_entries()) return Status::OK();
    return Status::InvalidArgument("gpu: flags for some entries only");
  }
  // OK unless keep_for_encode is set without both value arrays of
  // num_entries() each, or split_tables without its inputs
  // (SplitInputsOk) (InvalidArgument).
  Status CheckEncodeInputs() const {
    if (!keep_for_encode) return Status::OK();
    if (value_offset == nullptr || value_size == nullptr || value_offset->size() != num_entries() ||
        value_size->size() != num_entries()) {
      return Status::InvalidArgument("gpu: keep_for_encode needs every entry's value");
    }
    if (split_tables && !SplitInputsOk()) {
      return Status::InvalidArgument(
          "gpu: split_tables needs the block plan and every grandparent's bytes");
    }
    return Status::OK();
  }
};

// What KeySortDevice::CheckBlocks found over a job's data blocks.
struct BlockCheckResult {
  // The lowest span that failed its check (~0: none), and its
  // CheckDataBlock code; the other fields mean nothing when there is one.
  uint64_t bad_block = ~uint64_t{0};
  uint32_t bad_code = kDataBlockOk;
  BlockSums sums{0, 0, 0};  // over every block: with entries, entries, key bytes
  // The internal-key size of every entry when every block with entries
  // has fixed-width keys of one size (FixedKeySize), 0 when they differ or
  // vary, kNoEntries when no block has entries.
  static constexpr uint64_t kNoEntries = ~uint64_t{0};
  uint64_t fixed_key_size = kNoEntries;
};

// DecodeKeys' input: the validated data blocks of the file arena that hold
// entries (decode_common.h), and the host key arena to fill.
struct DecodeInput {
  const uint8_t* arena = nullptr;  // file arena, from HostArena(); arena_size bytes
  uint64_t arena_size = 0;
  uint8_t* key_arena = nullptr;  // from HostKeyArena(); key_arena_size bytes
  uint64_t key_arena_size = 0;
  HostVector<DecodeBlock> blocks;  // n >= 1 each, first_entry from 0 ascending
  uint64_t entries = 0;            // the blocks' entries in all
  // Keys-only mode: the device needs only each block's prefix and key
  // suffixes and its end offsets (ForEachKeySpan), not its values (the CPU
  // checked the checksums); a device that uploads the arena itself (not
  // staged) copies just those, in runs (ForEachKeyRun).
  bool keys_only = false;
};

// The parts of block b of the file arena DecodeKeys reads: [offset, offset
// + P + KS) (prefix, key suffixes) and the end-offset arrays after the
// values. fn(offset, size) for each non-empty one.
template <typename Fn>
void ForEachKeySpan(const DecodeBlock& b, Fn&& fn) {
  const uint64_t keys = uint64_t{b.prefix_size} + b.key_bytes;
  const uint64_t arrays =
      uint64_t{b.n} * b.offset_width *
      ((b.key_width == kVariableWidth ? 1u : 0u) + (b.value_width == kVariableWidth ? 1u : 0u));
  if (keys > 0) fn(b.offset, keys);
  if (arrays > 0) fn(b.offset + keys + b.value_bytes, arrays);
}

// The copies that upload the blocks' key spans (ForEachKeySpan, in arena
// order): fn(offset, size) for each run of spans whose gaps are under
// max_gap, gaps included (a value under max_gap goes along: one copy of it
// costs less than a second copy call).
template <typename Fn>
void ForEachKeyRun(const HostVector<DecodeBlock>& blocks, uint64_t max_gap, Fn&& fn) {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool open = false;
  for (const DecodeBlock& b : blocks) {
    ForEachKeySpan(b, [&](uint64_t offset, uint64_t size) {
      if (open && offset >= end && offset - end < max_gap) {
        end = offset + size;
        return;
      }
      if (open) fn(begin, end - begin);
      begin = offset;
      end = offset + size;
      open = true;
    });
  }
  if (open) fn(begin, end - begin);
}

// DecodeKeys' output: per entry, in block order.
struct DecodeOutput {
  HostVector<uint64_t>* key_offset = nullptr;  // into the key arena
  HostVector<uint32_t>* key_size = nullptr;
  HostVector<uint64_t>* value_offset = nullptr;  // into the file arena
  HostVector<uint32_t>* value_size = nullptr;
  // Whether the value arrays must come back. When false (device-encode
  // mode: the CPU never reads a value's place) a device that keeps them
  // for Run may leave both empty (the CUDA device does), and the Run that
  // follows over the same arenas needs none from the host.
  bool values_to_host = true;
  // The lowest entry whose key is not an internal key (InternalKeyOk), or ~0.
  uint64_t bad_entry = ~uint64_t{0};
};

struct KeySortOutput {
  HostVector<uint32_t> kept;  // entry indices in internal-key order
  // With keep_for_encode: kept.size() PlanEntry, in output order; owned by
  // the device (pinned on the GPU backend), valid until its next call
  // other than WaitPlan. The CUDA device copies them back in parts while
  // the caller plans: no entry may be read before WaitPlan says it is there.
  const PlanEntry* plan = nullptr;
  // With keep_for_encode, where the device plans blocks (docs/GPU.md,
  // "Block plan"; else nullptr and 0): its data blocks in output order,
  // each subcompaction range cut as one table from its first entry, or with
  // split_tables each table (plan_common.h, BlockRun), there when Run
  // returns, valid as plan is.
  // The plan entries then come back only where a planner thread asks for
  // them (WaitPlan), from the part holding that position to its range's end.
  const BlockRun* runs = nullptr;
  uint64_t num_runs = 0;
  // With split_tables: every output table's first output position,
  // ascending, each range's start included (the runs are then cut from
  // each table's start, not only from each range's); else empty.
  std::vector<uint64_t> table_starts;
  // With keep_for_encode: for each subcompaction boundary b = 1, 2, ...
  // (KeySortInput::boundaries), at [b - 1], the first output position whose
  // PlanEntry::boundaries >= b (kept.size() when none): where the
  // subcompaction ranges start, known before the plan entries arrive.
  std::vector<uint64_t> boundary_starts;
  // Index into KeySortInput::blocks of a block whose checksum failed (the
  // lowest one) when Run returned Corruption for a checksum; else ~0.
  uint64_t bad_block = ~uint64_t{0};
};

// The subcompaction ranges over n output positions, from
// KeySortOutput::boundary_starts: *starts gets 0, each start strictly
// inside (0, n) once, then n (range r is [starts[r], starts[r + 1])).
// Returns false when the boundary starts descend or pass n (those are
// left out).
inline bool SubcompactionRangeStarts(const std::vector<uint64_t>& boundary_starts, uint64_t n,
                                     std::vector<uint64_t>* starts) {
  starts->assign(1, 0);
  bool ordered = true;
  for (const uint64_t k : boundary_starts) {
    ordered = ordered && k >= starts->back() && k <= n;
    if (k > starts->back() && k < n) starts->push_back(k);
  }
  starts->push_back(n);
  return ordered;
}

// The data blocks of a job's output tables, planned by the CPU
// (output_planner.h) for the device to fill (encode_common.h) from the
// entries and the kept order the last Run left on it.
struct EncodeJob {
  // The arenas of the KeySortInput the last Run took (values: file arena;
  // keys: key arena).
  const uint8_t* arena = nullptr;
  uint64_t arena_size = 0;
  const uint8_t* key_arena = nullptr;
  uint64_t key_arena_size = 0;
  // Page-locked where the device can (HostVector), so a key-first job's
  // encode uploads them with a copy kernel while the staged copies still
  // hold the copy engine.
  HostVector<EncodeBlock> blocks;  // in output order, covering the kept entries in order
  // The tables' filter blocks (bloom bits on), in table order; a table's
  // filter follows its data blocks in the output.
  HostVector<EncodeFilter> filters;
  // The tables' tails (properties, index, footer: tail_common.h), in table
  // order; each table's bytes, data blocks to footer, are contiguous.
  HostVector<EncodeTable> tables;
  std::string comparator;  // the comparator name the properties blocks store
  uint64_t out_size = 0;   // bytes of every table (and the padding between tables)
  // EncodeOutputs' scratch (host only): each subcompaction range's lists as
  // its planner thread makes them, before they are laid out above. Kept
  // across jobs, cleared, so their pages stay mapped: fresh vectors each job
  // spent about a third of the plan's CPU in page faults and regrowth
  // copies (16 planner threads faulting at once on the GPU machine).
  struct RangeLists {
    std::vector<EncodeBlock> blocks;
    std::vector<EncodeFilter> filters;
    std::vector<EncodeTable> tails;
  };
  std::vector<RangeLists> range_lists;
};

// The filters of the tables whose data blocks are job.blocks[first_block,
// end_block) (a range of whole tables): [*first_filter, *end_filter), those
// whose first kept position lies in the blocks' kept positions.
inline void FiltersOfBlocks(const EncodeJob& job, uint64_t first_block, uint64_t end_block,
                            uint64_t* first_filter, uint64_t* end_filter) {
  *first_filter = *end_filter = 0;
  if (first_block >= end_block || end_block > job.blocks.size()) return;
  const uint64_t lo = job.blocks[first_block].first;
  const uint64_t hi = job.blocks[end_block - 1].first + job.blocks[end_block - 1].n;
  const auto below = [](const EncodeFilter& f, uint64_t k) { return f.first < k; };
  *first_filter = static_cast<uint64_t>(
      std::lower_bound(job.filters.begin(), job.filters.end(), lo, below) - job.filters.begin());
  *end_filter = static_cast<uint64_t>(
      std::lower_bound(job.filters.begin(), job.filters.end(), hi, below) - job.filters.begin());
}

// The tables whose data blocks start in job.blocks[first_block, end_block)
// (a range of whole tables): [*first_table, *end_table).
inline void TablesOfBlocks(const EncodeJob& job, uint64_t first_block, uint64_t end_block,
                           uint64_t* first_table, uint64_t* end_table) {
  const auto below = [](const EncodeTable& t, uint64_t b) { return t.first_block < b; };
  *first_table = static_cast<uint64_t>(
      std::lower_bound(job.tables.begin(), job.tables.end(), first_block, below) -
      job.tables.begin());
  *end_table = static_cast<uint64_t>(
      std::lower_bound(job.tables.begin(), job.tables.end(), end_block, below) -
      job.tables.begin());
}

// The output bytes of blocks [first_block, end_block) of job (a range of
// whole tables, CheckEncodeJob passed): [*begin, *end) from the first byte
// of any of its blocks, filters or tables to the last; both 0 when it has
// none.
inline void ChunkExtent(const EncodeJob& job, uint64_t first_block, uint64_t end_block,
                        uint64_t* begin, uint64_t* end) {
  uint64_t lo = ~uint64_t{0};
  uint64_t hi = 0;
  const auto add = [&](uint64_t offset, uint64_t size) {
    lo = std::min(lo, offset);
    hi = std::max(hi, offset + size);
  };
  for (uint64_t i = first_block; i < end_block; ++i) {
    add(job.blocks[i].out_offset, EncodedBlockSize(job.blocks[i]) + 5);
  }
  uint64_t f0 = 0, f1 = 0, t0 = 0, t1 = 0;
  FiltersOfBlocks(job, first_block, end_block, &f0, &f1);
  for (uint64_t i = f0; i < f1; ++i)
    add(job.filters[i].out_offset, EncodedFilterSize(job.filters[i]) + 5);
  TablesOfBlocks(job, first_block, end_block, &t0, &t1);
  for (uint64_t i = t0; i < t1; ++i) add(job.tables[i].out_offset, TableFileSize(job.tables[i]));
  *begin = hi == 0 ? 0 : lo;
  *end = hi;
}

// OK when blocks [first_block, end_block) of job are a range of job.blocks
// and each takes kept positions inside [0, kept) and lies inside
// out[0, job.out_size) with its trailer, and so do their tables' filters
// (FiltersOfBlocks; ordered, disjoint, with 1 to 12 probes) and tables
// (TablesOfBlocks: ordered, disjoint, over whole blocks of the range, with
// an index layout their blocks' index_key_end fit); else InvalidArgument
// (a planning bug must not write outside the buffers). EncodeBlocks checks
// each chunk just before it places it.
inline Status CheckEncodeJob(const EncodeJob& job, uint64_t first_block, uint64_t end_block,
                             uint64_t kept) {
  if (first_block > end_block || end_block > job.blocks.size()) {
    return Status::InvalidArgument("gpu: encode: a block range outside the job");
  }
  for (uint64_t i = first_block; i < end_block; ++i) {
    const EncodeBlock& b = job.blocks[i];
    const uint64_t end = b.out_offset + EncodedBlockSize(b) + 5;
    if (b.n == 0 || b.first > kept || b.n > kept - b.first || end > job.out_size ||
        end < b.out_offset) {
      return Status::InvalidArgument("gpu: encode: a planned block lies outside the job");
    }
  }
  uint64_t first_filter = 0;
  uint64_t end_filter = 0;
  FiltersOfBlocks(job, first_block, end_block, &first_filter, &end_filter);
  for (uint64_t i = first_filter; i < end_filter; ++i) {
    const EncodeFilter& f = job.filters[i];
    const uint64_t end = f.out_offset + EncodedFilterSize(f) + 5;
    if (f.num_lines == 0 || f.num_probes < 1 || f.num_probes > 12 || f.first >= f.end ||
        f.end > kept || (i > 0 && job.filters[i - 1].end > f.first) || end > job.out_size ||
        end < f.out_offset) {
      return Status::InvalidArgument("gpu: encode: a planned filter lies outside the job");
    }
  }
  uint64_t first_table = 0;
  uint64_t end_table = 0;
  TablesOfBlocks(job, first_block, end_block, &first_table, &end_table);
  for (uint64_t i = first_table; i < end_table; ++i) {
    const EncodeTable& t = job.tables[i];
    const uint64_t end = t.out_offset + TableFileSize(t);
    const bool ordered =
        i == 0 || (job.tables[i - 1].end_block <= t.first_block &&
                   job.tables[i - 1].out_offset + TableFileSize(job.tables[i - 1]) <= t.out_offset);
    // Its blocks: in the call's range, from its start, inside its data bytes.
    bool blocks_inside = t.first_block < t.end_block && t.end_block <= end_block &&
                         t.end_block - t.first_block <= 0xffffffffu;
    if (blocks_inside) {
      const EncodeBlock& b0 = job.blocks[t.first_block];
      const EncodeBlock& bl = job.blocks[t.end_block - 1];
      blocks_inside =
          b0.out_offset == t.out_offset &&
          bl.out_offset + EncodedBlockSize(bl) + 5 == t.out_offset + t.data_bytes &&
          uint64_t{bl.index_key_end} ==
              t.index_key_bytes + uint64_t{t.index_prefix} * (t.end_block - t.first_block);
      // Index entry j's key ends at index_key_end - (j + 1) * P, at least
      // one prefix further than entry j - 1's: every suffix in the section.
      for (uint64_t b = t.first_block + 1; blocks_inside && b < t.end_block; ++b) {
        blocks_inside = job.blocks[b].index_key_end >=
                        uint64_t{job.blocks[b - 1].index_key_end} + t.index_prefix;
      }
      blocks_inside = blocks_inside && b0.index_key_end >= t.index_prefix;
    }
    const bool widths =
        (t.index_offset_width == 2 || t.index_offset_width == 4) &&
        (t.index_key_width == kVariableWidth ||
         t.index_key_bytes == uint64_t{t.index_key_width} * (t.end_block - t.first_block)) &&
        t.index_key_bytes <= 0xffffffffu;
    if (!blocks_inside || !ordered || !widths || t.comparator_size != job.comparator.size() ||
        end > job.out_size || end < t.out_offset) {
      return Status::InvalidArgument("gpu: encode: a planned table lies outside the job");
    }
  }
  return Status::OK();
}

// The chunks ascending and disjoint (so chunks in flight at once write
// disjoint parts of the output); EncodeBlocks checks each chunk's blocks
// (CheckEncodeJob) just before it places and queues it.
inline Status CheckChunkOrder(const std::vector<std::pair<uint64_t, uint64_t>>& chunks) {
  for (size_t c = 1; c < chunks.size(); ++c) {
    if (chunks[c].first < chunks[c - 1].second) {
      return Status::InvalidArgument("gpu: encode: chunks out of order");
    }
  }
  return Status::OK();
}

// Which arenas a device holds for EncodeBlocks: those of the last Run with
// keep_for_encode that returned OK, until ReleaseEncodeInput or a failed
// EncodeBlocks (both devices check it, so the host reference catches a
// caller that breaks EncodeBlocks' precondition).
class HeldInput {
 public:
  void Hold(const KeySortInput& in) {
    Hold(in.arena, in.arena_size, in.key_arena, in.key_arena_size);
  }
  void Hold(const uint8_t* arena, uint64_t arena_size, const uint8_t* key_arena,
            uint64_t key_arena_size) {
    arena_ = arena;
    arena_size_ = arena_size;
    key_arena_ = key_arena;
    key_arena_size_ = key_arena_size;
    held_ = true;
  }
  bool Holds(const uint8_t* arena, uint64_t arena_size, const uint8_t* key_arena,
             uint64_t key_arena_size) const {
    return held_ && arena == arena_ && arena_size == arena_size_ && key_arena == key_arena_ &&
           key_arena_size == key_arena_size_;
  }
  void Release() { held_ = false; }
  bool held() const { return held_; }
  // OK when job's arenas are the held ones, else Aborted("gpu: encode: ...").
  Status Check(const EncodeJob& job) const {
    if (Holds(job.arena, job.arena_size, job.key_arena, job.key_arena_size)) {
      return Status::OK();
    }
    return Status::Aborted("gpu: encode: the job's input is not on the device",
                           "EncodeBlocks must follow a Run with keep_for_encode");
  }

 private:
  const uint8_t* arena_ = nullptr;
  uint64_t arena_size_ = 0;
  const uint8_t* key_arena_ = nullptr;
  uint64_t key_arena_size_ = 0;
  bool held_ = false;
};

// Which byte ranges of a host file arena a device has staged (copied to
// the same ranges of its device file arena) since BeginStaging: the
// bookkeeping both devices share, so the host reference checks the
// staging contract too. DecodeKeys skips its whole-arena upload only when
// Covers(its arena, its size).
class StagedArena {
 public:
  void Begin(const uint8_t* arena, uint64_t size) {
    arena_ = arena;
    size_ = size;
    ranges_.clear();
    active_ = true;
  }
  // OK when staging is active and [offset, offset + size) lies inside the
  // arena; the range is recorded. Else InvalidArgument, nothing recorded.
  Status Add(uint64_t offset, uint64_t size) {
    if (!active_) return Status::InvalidArgument("gpu: copy_in: StageRange without BeginStaging");
    if (offset > size_ || size > size_ - offset) {
      return Status::InvalidArgument(
          "gpu: copy_in: staged range outside the arena",
          std::to_string(offset) + "+" + std::to_string(size) + " > " + std::to_string(size_));
    }
    ranges_.push_back({offset, size});
    return Status::OK();
  }
  // Whether arena[0, size) is the staged arena and every byte of it was
  // staged.
  bool Covers(const uint8_t* arena, uint64_t size) const {
    if (!active_ || arena != arena_ || size != size_) return false;
    std::vector<std::pair<uint64_t, uint64_t>> r = ranges_;
    std::sort(r.begin(), r.end());
    uint64_t covered = 0;
    for (const auto& [offset, n] : r) {
      if (offset > covered) return false;
      covered = std::max(covered, offset + n);
    }
    return covered >= size;
  }
  bool active() const { return active_; }
  const uint8_t* arena() const { return arena_; }  // the one BeginStaging was given
  uint64_t ranges() const { return ranges_.size(); }
  void Reset() {
    active_ = false;
    ranges_.clear();
  }

 private:
  const uint8_t* arena_ = nullptr;
  uint64_t size_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;  // offset, size
  bool active_ = false;
};

// Output bytes [origin, origin + size) at dst[0, size).
struct PlaceExtent {
  uint8_t* dst = nullptr;
  uint64_t origin = 0;
  uint64_t size = 0;
};

// Where KeySortDevice::EncodeBlocks puts a chunk's bytes on the host: the
// job's output bytes [origin, origin + size) at dst[0, size), but those of
// the lent extents there instead (an output table's file lent in place by
// its Env, WritableFile::LendPrepared; in ascending origin order, not
// overlapping, in memory the device's copies reach directly:
// KeySortDevice::DirectHostMemory). The whole output at one place is
// {out, 0, job.out_size}.
struct ChunkPlace {
  uint8_t* dst = nullptr;
  uint64_t origin = 0;
  uint64_t size = 0;
  std::vector<PlaceExtent> lent;

  // Whether every output byte of [begin, end) has a place.
  bool Covers(uint64_t begin, uint64_t end) const {
    bool covered = true;
    ForEachPart(begin, end, [&](uint8_t* at, uint64_t, uint64_t) { covered &= at != nullptr; });
    return covered;
  }
  // Calls fn(host address or nullptr where none, output offset, bytes) for
  // the parts of output bytes [begin, end), in order: the lent extents'
  // parts, and between them dst's.
  template <typename Fn>
  void ForEachPart(uint64_t begin, uint64_t end, Fn&& fn) const {
    auto at_dst = [&](uint64_t from, uint64_t to) {
      if (from >= to) return;
      const bool inside = from >= origin && to - origin <= size;
      fn(inside ? dst + (from - origin) : nullptr, from, to - from);
    };
    // The first extent ending after begin.
    auto it =
        std::upper_bound(lent.begin(), lent.end(), begin,
                         [](uint64_t x, const PlaceExtent& e) { return x < e.origin + e.size; });
    uint64_t at = begin;
    for (; it != lent.end() && it->origin < end; ++it) {
      at_dst(at, std::min(it->origin, end));
      const uint64_t from = std::max(at, it->origin);
      const uint64_t to = std::min(end, it->origin + it->size);
      fn(it->dst + (from - it->origin), from, to - from);
      at = to;
    }
    at_dst(at, end);
  }
};
using ChunkPlacer = std::function<ChunkPlace(size_t chunk)>;

class KeySortDevice {
 public:
  virtual ~KeySortDevice() = default;
  virtual const char* Name() const = 0;

  // A host buffer of at least bytes (pinned on the GPU backend), reused by
  // later calls: valid until the next HostArena call or destruction. The
  // file arena. Ends any staging (CancelStaging) first, so no copy from the
  // buffer is in flight when the caller writes it or it is reallocated.
  virtual Status HostArena(uint64_t bytes, uint8_t** arena) = 0;

  // Staging: the file arena goes to the device range by range while the
  // files are still being read, instead of whole in DecodeKeys.
  // BeginStaging frees what an earlier job left on the device and
  // allocates the device file arena for arena[0, size) (arena from
  // HostArena, size known from the files' metadata). StageRange copies
  // arena[offset, offset + size), whose bytes are final, to the same range
  // of the device arena, asynchronously (the CUDA device: cudaMemcpyAsync
  // on its stream from the pinned arena; the host reference only records
  // it); the caller must not write the range again. DecodeKeys then skips
  // its own upload when given the staged arena (same pointer and size) and
  // every byte was staged, and otherwise frees the staged arena and uploads
  // as without staging; either way it ends the staging. CancelStaging
  // drains the copies and frees the device arena (idempotent; callers use
  // it on every failure path before DecodeKeys). Failures: Aborted("gpu:
  // copy_in: ...") for a device error (the staging is then cancelled),
  // InvalidArgument for a range outside the arena or no BeginStaging.
  // StageFrom stages arena[offset, offset + total) from pieces instead,
  // one after the other (their sizes sum to total): bytes equal to those
  // the arena would hold there (a table lent in place by an in-memory Env,
  // RandomAccessFile::Lend), which must stay valid until DecodeKeys or
  // CancelStaging returns. The CUDA device copies from the pieces and
  // leaves that range of the host arena unwritten, so the caller copies
  // the pieces into it before DecodeKeys should the staging not cover the
  // arena (ReadInputTables); the host reference copies them into the
  // arena. DirectHostMemory(p, size): whether the device's copies may read
  // or write host memory p[0, size) where it is, for StageFrom and for a
  // ChunkPlace's lent extents (the CUDA device: page-locked memory, which
  // the copy engines reach at the bus's rate; the host reference: any);
  // else the caller copies through the device's own buffers (the arena
  // and StageRange; the host output). It may be called from any thread.
  // Thread safety: StageRange and StageFrom may be called from any thread,
  // but calls must not overlap each other or any other call but
  // DirectHostMemory (ReadInputTables holds a mutex around them).
  //
  // Key-first jobs: SetKeyFirst(true) before BeginStaging lets this job's
  // CheckBlocks, DecodeKeys and Run go ahead of the staged copies (docs/
  // GPU.md, "Key-first jobs"): the CUDA device then stages on a stream of
  // its own, CheckBlocks reads each data block's footer, end offsets and
  // keys straight from the staged host memory (page-locked, zero copy)
  // while the copies run, and only the checksums' verify and the encode
  // wait for the copies: Run leaves the verify's result to WaitVerified.
  // The device may decline (no staging that covers the arena, memory it
  // cannot read in place, no room for the keys' view): the job then runs
  // as without. Staged pieces (StageFrom) must then stay valid until
  // WaitVerified, CancelStaging, ReleaseEncodeInput or ReleaseHostBuffers
  // returns, not only until DecodeKeys. Holds until changed.
  //
  // Staging groups (key-first jobs): MarkStaged ends a group, the copies
  // staged since BeginStaging or the last MarkStaged. A key-first job's
  // EncodeBlocks starts the kernels of a part of its output once the groups
  // that hold the values of the part's entries (and of every entry before
  // them) are in, not after the last copy, so that the output's first
  // copies back run beside the last copies in: the caller stages the
  // tables' low keys first (ReadInputTables, "Staging groups" in
  // docs/GPU.md). Which groups an entry needs comes from where its value
  // was staged, never from the keys, so any grouping is correct; one that
  // follows the keys only lets the encode start sooner. OK on the host
  // reference (its copies are done when staged).
  virtual void SetKeyFirst(bool on) = 0;
  virtual Status MarkStaged() = 0;
  virtual Status BeginStaging(const uint8_t* arena, uint64_t size) = 0;
  virtual Status StageRange(uint64_t offset, uint64_t size) = 0;
  virtual bool DirectHostMemory(const uint8_t* src, uint64_t size) = 0;
  virtual Status StageFrom(uint64_t offset, const std::vector<Slice>& pieces) = 0;
  virtual void CancelStaging() = 0;

  // The same for the key arena, a separate buffer (HostArena's stays valid).
  virtual Status HostKeyArena(uint64_t bytes, uint8_t** arena) = 0;

  // A host buffer of at least bytes for encoded output (pinned on the GPU
  // backend), reused like HostArena's.
  virtual Status HostOutput(uint64_t bytes, uint8_t** out) = 0;

  // Fills the planned data blocks of each chunk, job.blocks[chunks[c].first,
  // chunks[c].second), each at its out_offset of the job's output (sized
  // job.out_size): prefix, key suffixes, values, end offsets, footer,
  // trailer; their tables' filter blocks (FiltersOfBlocks: lines, footer,
  // trailer) and their tables' tails (TablesOfBlocks: properties and index
  // blocks with their trailers, footer; tail_common.h). The chunks are the
  // executor's groups of whole tables, in table order. Chunk c's bytes go
  // to the host at place(c) (ChunkPlace: output byte x at dst + x -
  // origin; every byte of the chunk must lie in [origin, origin + size),
  // else the call fails), called on the calling thread in chunk order
  // before chunk c's bytes are copied there; it may block until that
  // memory is free (the executor's output ring waits for an earlier
  // chunk's writes). Calls landed(c) on the calling thread, in chunk
  // order, once chunk c is at its place (from its first block's offset to
  // its last table's footer), and returns after the last: the executor
  // writes chunk c's files while later chunks are encoded. Chunk c is
  // placed and queued once chunks [0, c - queue_ahead] landed (0 counts as
  // 1: each chunk lands before the next is placed), so at most queue_ahead
  // chunks are queued and not landed, and the device's copies back run on
  // while the host waits for a landing (a key-first job's first landed
  // waits for its verify, which waits for every copy in). The executor's
  // output ring gives kOutputRingSlots: a place there waits for the writes
  // of the chunk kOutputRingSlots before it, which its landed starts.
  // landed returning false stops the call (chunks not yet queued are not
  // encoded; those in flight are waited for) and it returns OK. Adds its
  // time, less place's and landed's, under "gpu_encode". After a key-first
  // job's Run (WaitVerified) the device may encode before the checksums'
  // verify is done, but it waits for the verify before the first
  // landed(c): a bad checksum returns Corruption("block checksum
  // mismatch") with no chunk landed, and WaitVerified then gives the
  // block. Aborted("gpu: encode: ...") on any failure, InvalidArgument for
  // chunks out of order (CheckChunkOrder, before any is placed) or a range
  // or block outside the job (CheckEncodeJob, each chunk just before it is
  // placed: the chunks queued before a bad one still land). An injected
  // kEncode failure strikes the chunk that ends at the job's last block
  // (with several chunks: the earlier ones then land). REQUIRES: the last Run
  // returned OK with keep_for_encode over job's arenas, and neither
  // ReleaseEncodeInput nor a failed EncodeBlocks came since (the CUDA
  // device reuses the arenas' device copies, the entry arrays and the kept
  // order; Aborted when they are not there). A failed call releases them
  // as ReleaseEncodeInput does; no copy to a place outlives any call.
  virtual Status EncodeBlocks(const EncodeJob& job,
                              const std::vector<std::pair<uint64_t, uint64_t>>& chunks,
                              const ChunkPlacer& place, size_t queue_ahead,
                              std::map<std::string, uint64_t>* stage_micros,
                              const std::function<bool(size_t chunk)>& landed) = 0;

  // Frees what the last Run kept for EncodeBlocks (the CUDA device's
  // arenas, entry arrays, kept order and output buffer). Idempotent; the
  // executor calls it after the last chunk and on every path that does
  // not reach it.
  virtual void ReleaseEncodeInput() = 0;

  // Called when a job has ended (on every path): gives the host buffers'
  // pinned memory back to the process's PinnedPool (pinned_pool.h) for any
  // executor's next job, once no copy into or out of them can still run.
  // The host reference device has none.
  virtual void ReleaseHostBuffers() {}
  // The process's pinned host memory in the pool (all executors' devices);
  // all zero on the host reference device.
  virtual PinnedPool::Stats PinnedHostStats() const { return {}; }

  // Device bytes one job may use (the memory budget).
  virtual uint64_t MemoryBudget() const = 0;
  // Device bytes the jobs of every executor of the process on this device
  // may hold at once (DeviceMemoryLedger, keyed by Name()); 0: the device
  // is not shared (the host reference device).
  virtual uint64_t SharedMemoryCapacity() const { return 0; }

  // Device bytes a job of this shape needs, for the budget check: both
  // arenas (held from copy_in to the end of the encode) plus the larger of
  // the sort phase (per-entry arrays, sort scratch) and the encode phase
  // (the output data blocks and the plan). arena_bytes is the whole file
  // arena, with direct reads' alignment padding (job_input.h,
  // ArenaSpanBytes): the padding is counted, not left to the fixed slack.
  static uint64_t BytesNeeded(uint64_t arena_bytes, uint64_t key_arena_bytes, uint64_t entries,
                              uint64_t blocks);

  // Checks the data blocks of the file arena (HostArena's buffer,
  // arena_size bytes) whose contents lie at spans (each followed by its
  // trailer, inside the arena; device-encode mode, where the CPU reads only
  // the tables' footers and index blocks): CheckDataBlock on each, as the
  // CPU would. Fills *blocks with the DecodeBlock of every block with
  // entries, in span order, its key_base and first_entry the sums over the
  // blocks before it (the key arena's layout, decode_common.h), and
  // *result (the lowest failing span wins). The arena is on the device
  // after the call: staged (BeginStaging; the CUDA device waits here for the
  // staged copies still in flight), or, when the staging does not cover it,
  // staged whole by the call, so that DecodeKeys finds it staged. The CUDA
  // device queues the check behind the staged copies and waits for both:
  // adds "gpu_check" (the check's device time, with its records' copy
  // back) and "copy_in_wait" (the rest of that wait: the part of the
  // copies left on the critical path, as DecodeKeys would have waited).
  // In a key-first job (SetKeyFirst) it reads the blocks' footers, end
  // offsets and keys from the staged host memory instead ("gpu_gather")
  // and checks them there, the copies still running.
  // Aborted("gpu: verify: ...") on a device failure, and for an injected
  // kVerify failure (keys-only mode, which does not call it, meets that in
  // Run).
  virtual Status CheckBlocks(const uint8_t* arena, uint64_t arena_size,
                             const HostVector<BlockSpan>& spans, HostVector<DecodeBlock>* blocks,
                             BlockCheckResult* result,
                             std::map<std::string, uint64_t>* stage_micros) = 0;

  // Materializes every entry's internal key into in.key_arena and fills
  // *out (decode_common.h; 1-32 lanes per entry on the GPU, which then keeps the
  // file arena, the key arena it built and the entry arrays for the Run
  // that follows, so Run uploads none of them; the keys and the arrays
  // come back while Run works, and the caller reads none of them before
  // WaitDecodedKeys). out's arrays are HostVectors: pinned, so the copies
  // run at the bus's rate and asynchronously. Adds its stage times under
  // "copy_in" (the device's time copying the file arena: the whole-arena
  // upload, or the sum of the staged ranges' copies) and "gpu_decode"; with
  // a staged arena also "copy_in_wait" (the wall time it waited for staged
  // copies still in flight: the part of copy_in left on the critical path;
  // 0 on the host reference). Aborted("gpu: decode: ...") on a device
  // failure.
  virtual Status DecodeKeys(const DecodeInput& in, DecodeOutput* out,
                            std::map<std::string, uint64_t>* stage_micros) = 0;

  // Returns once the key arena and the entry arrays DecodeKeys fills on the
  // host are there: the CUDA device copies them back while the calls that
  // follow run (Run's sort overlaps them), so the caller waits here before
  // it reads any of them, and on its way out of a job. Adds the wall time
  // it waited under "keys_wait" (0 on the host reference, whose DecodeKeys
  // fills them before it returns). Aborted("gpu: decode: ...") when a copy
  // failed (the device's inputs are then released).
  virtual Status WaitDecodedKeys(std::map<std::string, uint64_t>* stage_micros) = 0;

  // Verifies, sorts and filters; adds its stage times (micros) under
  // "copy_in", "verify", "sort", "dedup", "copy_out" and, with
  // keep_for_encode, "gpu_plan" (the plan inputs, until the copies of
  // them back are queued; the CUDA device returns without waiting for
  // those: see WaitPlan).
  virtual Status Run(const KeySortInput& in, KeySortOutput* out,
                     std::map<std::string, uint64_t>* stage_micros) = 0;

  // After a Run of a key-first job (SetKeyFirst) that returned OK: waits
  // for the staged copies and the checksums' verify over them, which that
  // Run left running, and returns what Run would have: Corruption("block
  // checksum mismatch") with out->bad_block (and out->kept cleared) for a
  // bad checksum, Aborted("gpu: verify: ...") for a device failure. Adds
  // "copy_in" (the staged copies' device time), "copy_in_wait" (the wait
  // for them) and "verify". EncodeBlocks (before its first landed) and
  // every release of the input wait for the verify too: WaitVerified then
  // returns the result they found, until the next job's BeginStaging or
  // Run. OK at once when nothing was left (any other job).
  virtual Status WaitVerified(KeySortOutput* out,
                              std::map<std::string, uint64_t>* stage_micros) = 0;

  // Returns once the plan entry at output position k (k < kept.size() of
  // the last Run with keep_for_encode) is on the host, and sets *ready to
  // the end of a stretch [k, *ready) of entries that are all there (at
  // most kept.size()). The CUDA device copies the plan back in parts, each
  // subcompaction range's first part early (KeySortOutput::boundary_starts),
  // so that the ranges' planner threads start before the whole plan is
  // back; the host reference has it all but hands it out in stretches of
  // 1,000 entries, so the tests cut the planner's runs everywhere. May be
  // called from several threads at once. Aborted("gpu: plan: ...") when a
  // copy failed; InvalidArgument for k past the plan.
  virtual Status WaitPlan(uint64_t k, uint64_t* ready) = 0;

  // The caller reads no more plan entries (WaitPlan) of the last Run: the
  // CUDA device frees its plan entries before the encode allocates
  // (docs/GPU.md, "Block plan").
  virtual void ReleasePlan() = 0;
};

// The CPU reference. budget: the MemoryBudget() it reports.
std::unique_ptr<KeySortDevice> NewHostKeySortDevice(uint64_t budget);

// The CUDA device; nullptr plus a one-line *reason when no usable GPU is
// present or the library was built without CUDA.
std::unique_ptr<KeySortDevice> NewCudaKeySortDevice(const GpuExecutorOptions& options,
                                                    std::string* reason);

// The stage an injected failure hits (SetInjectedFailure), or kNone.
GpuStage InjectedFailure();

// The chunk loop of both devices' EncodeBlocks (its contract above), so
// the order the executor's output ring relies on is one piece of code.
// Chunk c, once chunks [0, c - queue_ahead] landed: an injected kEncode
// failure if it ends at the job's last block, CheckEncodeJob, then
// queue(c) (place it and queue its encode; the host device encodes it).
// land(c, &st) waits for chunk c and returns the caller's landed(c)
// (false: stop), or sets *st on a failure, which stops too. The chunks
// queued before a failure still land. Returns the first failure; sets
// *waited (when not nullptr) to the chunks land was called for.
inline Status EncodeChunksInOrder(const EncodeJob& job,
                                  const std::vector<std::pair<uint64_t, uint64_t>>& chunks,
                                  uint64_t kept, size_t queue_ahead,
                                  const std::function<Status(size_t)>& queue,
                                  const std::function<bool(size_t, Status*)>& land,
                                  size_t* waited) {
  const size_t ahead = std::max<size_t>(queue_ahead, 1);
  Status s;
  size_t queued = 0;
  size_t done = 0;
  bool go_on = true;
  const auto land_next = [&] {
    Status w;
    go_on = land(done++, &w) && w.ok();
    if (s.ok()) s = w;
  };
  for (size_t c = 0; c < chunks.size() && go_on && s.ok(); ++c) {
    while (go_on && c - done >= ahead) land_next();
    if (!go_on) break;
    if (InjectedFailure() == GpuStage::kEncode && chunks[c].second == job.blocks.size()) {
      s = Status::Aborted("gpu: injected failure at", GpuStageName(GpuStage::kEncode));
      break;
    }
    s = CheckEncodeJob(job, chunks[c].first, chunks[c].second, kept);
    if (s.ok()) s = queue(c);
    if (s.ok()) queued = c + 1;
  }
  while (go_on && done < queued) land_next();
  if (waited != nullptr) *waited = done;
  return s;
}

}  // namespace gpu
}  // namespace accelkv
