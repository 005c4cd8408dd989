// The CPU plan of a device-encode job's output (docs/GPU.md, "Encode
// modes"): which kept entry goes to which output table and data block, each
// block's layout, each table's index block, properties and filter size, by
// TableBuilder's and OutputSplitter's rules, from the device's dense plan
// inputs (plan_common.h). EncodeOutputs (device_encoder.h) runs one
// OutputPlanner per subcompaction range, then the device encodes what it
// planned.
//
// Thread safety: an OutputPlanner is used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accelkv/env.h"
#include "accelkv/status.h"
#include "compaction/compaction.h"
#include "compaction/compaction_executor.h"
#include "gpu/job_input.h"
#include "gpu/key_sort_device.h"
#include "table/block_builder.h"
#include "table/properties_block.h"
#include "util/align.h"

namespace accelkv {
namespace gpu {

// Output tables' alignment in the host output buffer with direct writes.
inline constexpr uint64_t kTableAlignment = kDirectIoAlignment;

// One output table as planned: the device encodes its file's bytes into
// out[out_offset, out_offset + file_size): its data blocks (data_bytes),
// its filter block (with bloom bits on) with its trailer (filter_bytes),
// then its properties and index blocks and footer (EncodeTable).
struct PlannedTable {
  uint64_t out_offset = 0;
  uint64_t data_bytes = 0;
  uint64_t first_block = 0;  // its data blocks: EncodeJob::blocks[first_block, end_block)
  uint64_t end_block = 0;
  uint64_t first_kept = 0;  // its first entry's kept position
  bool has_filter = false;
  uint64_t filter_keys = 0;   // the keys FilterBuilder would hold
  uint64_t filter_bytes = 0;  // its filter block with the trailer (0: none)
  uint64_t file_size = 0;     // its whole file (FinishTable)
  TableProperties props;
  // The index block's layout (TableBuilder's index_block, sizes only: the
  // device writes it) and its keys' full bytes (each data block's last key).
  BlockLayoutTracker index;
  uint64_t index_key_bytes = 0;
};

// The comparator name TableBuilder stores in the properties block.
std::string OutputComparatorName(const CompactionJobSpec& spec);

// Fills what a table's tail depends on (tail_common.h) from its properties
// (numbers, key sizes, comparator name) and its index block's layout.
void SetTailLayout(const TableProperties& props, const BlockLayout& index, EncodeTable* t);

// Walks the kept entries as CpuCompactionExecutor + TableBuilder would, with
// sizes only (docs/FORMAT.md, "Data blocks" boundary rule; OutputSplitter
// over EstimateTableFileSize; each open data block's exact layout from a
// BlockLayoutTracker), filling the EncodeJob and the tables' index blocks,
// properties and filters. Mirrors TableBuilder::Add/FlushDataBlock/
// EstimatedFileSize/Finish step for step; the executor tests check the
// result byte for byte. Per entry it reads only the device's dense plan
// inputs (plan_common.h); a key itself only where a table or a block ends.
class OutputPlanner {
 public:
  // The plan of sorted.kept (a range of it: Add and AddRun from its first
  // position on), appending the data blocks and filters to *blocks and
  // *filters; reads the plan entries and the key arena of input.
  OutputPlanner(const CompactionJobSpec& spec, const JobInput& input, const KeySortOutput& sorted,
                std::vector<EncodeBlock>* blocks, std::vector<EncodeFilter>* filters,
                std::vector<EncodeTable>* encode_tables);

  // Kept entry k (output position k; called for k = 0, 1, ... in order),
  // e its PlanEntry (plan_[k] unless given).
  Status Add(uint64_t k) { return Add(k, plan_[k]); }
  Status Add(uint64_t k, const PlanEntry& e);

  // Adds kept entries k, k + 1, ... (before end) that Add would add without
  // a decision of its own: inside the open data block (no block boundary
  // before them), with the open table's size bound below the split size, no
  // block near kMaxBlockSize, and no split for a boundary or grandparent
  // overlap (OutputSplitter::SkipCounted). Returns how many it added (0:
  // none; Add decides the next entry). The same state as Add for each, from
  // one tight pass over the dense plan entries instead of a full Add per
  // entry: about 30 entries of 128-byte values per 4 KiB block share one
  // Add and one run (the executor tests check the output byte for byte).
  uint64_t AddRun(uint64_t k, uint64_t end);

  // After Add(b.first, b.head): adds the rest of the device's block b
  // (plan_common.h, BlockRun) at once, as AddRun would over its entries,
  // and sets *taken; or adds nothing (*taken false) where AddRun's tests
  // would stop inside it, and the caller goes on entry by entry. b must be
  // cut for the open table, from its first entry (RangePlanner). Corruption when the
  // record disagrees with the plan (the block did not start at b.first, or
  // runs past the boundary rule).
  Status AddBlockRun(const BlockRun& b, bool* taken);

  // Adds the whole of the device's block b (plan_common.h, BlockRun: its
  // first entry, then its run) as Add(b.first, b.head) then AddBlockRun(b)
  // would, and sets *taken, where nothing is left to decide: the open table
  // has entries, b starts a block by the boundary rule and fits under
  // kMaxBlockSize, the table's size bound stays below the split size
  // before b's last entry, and the splitter stops at none of b's entries
  // (OutputSplitter::SkipCounted). Else it changes nothing (*taken false)
  // and the caller goes the way above, which decides (or finds the record
  // out of step). The state after it is the one those calls leave (the
  // executor tests check the output byte for byte); RangePlanner's path for
  // a job whose blocks hold one entry each (4 KiB values: one record, one
  // Add, one AddBlockRun and their checks per entry before). A failure is
  // the previous block's, as FlushBlock reports it from Add.
  Status AddWholeBlock(const BlockRun& b, bool* taken);

  // The tables started so far.
  size_t num_tables() const { return tables_.size(); }

  Status Finish();

  std::vector<std::unique_ptr<PlannedTable>>& tables() { return tables_; }
  // The planned output's bytes (the tables' files), from 0; with
  // direct writes rounded up to kTableAlignment, so that ranges laid out
  // one after another keep their tables aligned.
  uint64_t out_size() const { return AlignTable(out_cursor_); }

 private:
  // TableBuilder::EstimatedFileSize, or with bound its EstimatedFileSizeBound.
  uint64_t EstimatedFileSize(bool bound);

  // An upper bound of how much EstimatedFileSize(/*bound=*/true) grows from
  // before an entry (key_size K, value_size V) to before the next one of the
  // same table. Before every entry but a table's first the open data block
  // holds the previous entry (key size K'), so the bound is
  //   TableSizeFixedPart(C, S, K') + offset_ + index.SizeBoundWith(K') +
  //   SizeBound(data block) + 5 + (filter: FilterContentsSize + 5),
  // and adding the entry changes its terms by at most:
  //  - fixed part: PropertiesBlockSize's value bytes grow by K - K' <= K; the
  //    rest of its layout (names, n = 11) is fixed but for the two end-offset
  //    arrays, 11 * 2 or 4 bytes each, value_ends present or not (all three
  //    byte values 8 bytes or not): at most 2 * 11 * 4 = 88 more. <= K + 88.
  //  - no data block flushed before the entry: the data block's SizeBound
  //    grows by K + V + 8 and the index's SizeBoundWith by K - K' <= K.
  //    <= 2K + V + 8.
  //  - a data block flushed before it: SizeBound(block) + 5 becomes its
  //    exact size (<= SizeBound: BlockBuilder) + 5 in offset_ plus the new
  //    block's SizeBound(K, V, 1) + 5 = K + V + 29; the index gains the
  //    flushed block's entry (K' key bytes, 16-byte handle, 8 bytes of
  //    bound) while SizeBoundWith's key goes from K' to K: K + 24.
  //    <= 2K + V + 53.
  //  - filter: at most one key more, <= 64 * ceil(bits / 512) (growth_fixed_).
  // Sum: <= 3K + V + 141 + filter; 4K + V + 256 + filter leaves a margin.
  uint64_t MaxGrowth(uint64_t key_size, uint64_t value_size) const;

  // Makes size_upper_ valid: the bound Add computes before an entry.
  void EnsureSizeUpper();

  // Add's part after its decisions (the table open, the block flushed if
  // the entry starts one, the guard passed): kept entry k, e its
  // PlanEntry, into the open block and table. Add and AddWholeBlock.
  void AppendEntry(uint64_t k, const PlanEntry& e);

  // AddBlockRun's part after its tests: the run of b (its entries after
  // the first, at least one) into the open block and table. AddBlockRun
  // and AddWholeBlock.
  void TakeRun(const BlockRun& b);

  void StartTable();

  void ResetBlock();

  // Closes the open data block: its layout and its index entry.
  Status FlushBlock();

  // The last kept entry's internal key, in the key arena.
  Slice LastKey() const;

  // FilterBuilder::EncodedSize for num_keys keys.
  uint64_t FilterContentsSize(uint64_t num_keys) const;

  Status FinishTable();

  // With direct writes each table starts at a multiple of kTableAlignment of
  // the output buffer (whose base the device aligns to a page): the file
  // writer then sends the table's whole 4 KiB blocks to the disk straight
  // from the buffer (posix_direct_writable_file.h). The padding (under
  // 4 KiB per table) is never written to a file.
  uint64_t AlignTable(uint64_t offset) const;

  const CompactionJobSpec& spec_;
  const char* const key_arena_;                    // the job's keys (PlanEntry::key_offset)
  const PlanEntry* const plan_;                    // per kept entry
  std::vector<EncodeBlock>* const blocks_;         // the planned data blocks, appended
  std::vector<EncodeFilter>* const filters_;       // the planned filters, appended
  std::vector<EncodeTable>* const encode_tables_;  // the planned tables' tails, appended
  OutputSplitter splitter_;
  std::string comparator_name_;
  std::vector<std::unique_ptr<PlannedTable>> tables_;
  PlannedTable* table_ = nullptr;                // the open table
  uint64_t offset_ = 0;                          // its finished data blocks with trailers
  uint64_t prefix_prev_ = 0;                     // P_{i-1} (TableBuilder)
  uint64_t prefix_next_ = 0;                     // P_i
  uint64_t next_multiple_ = 0;                   // (floor(P_{i-1} / block_size) + 1) * block_size
  uint64_t last_ = 0;                            // the last kept entry (any table)
  uint64_t last_key_size_ = 0;                   // its key's size
  uint64_t last_key_offset_ = 0;                 // and offset in the key arena
  uint64_t fixed_part_ = 0;                      // TableSizeFixedPart for the open table and
  uint64_t fixed_part_key_size_ = ~uint64_t{0};  // this last key size
  BlockLayoutTracker block_;      // the open data block (empty: none), fed by AddSized
  uint64_t block_first_ = 0;      // its first entry's kept position
  uint64_t block_key_bytes_ = 0;  // its full keys' bytes (SizeBoundWith)
  uint64_t block_value_bytes_ = 0;
  // An upper bound of EstimatedFileSize(/*bound=*/true) before the next entry
  // of the open table (Add; valid from its second entry on), and
  // MaxGrowth's part that does not depend on the entry.
  uint64_t size_upper_ = 0;
  bool size_upper_valid_ = false;
  uint64_t growth_fixed_ = 0;
  uint64_t out_cursor_ = 0;  // end of the planned output
};

}  // namespace gpu
}  // namespace accelkv
