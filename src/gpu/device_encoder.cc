#include "gpu/device_encoder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpu/gpu_util.h"
#include "table/block_builder.h"
#include "table/filter.h"
#include "table/format.h"
#include "table/properties_block.h"
#include "table/table_builder.h"
#include "util/align.h"
#include "util/internal_key.h"
#include "version/file_meta.h"

namespace accelkv {
namespace gpu {

namespace {

static_assert(kVariableWidth == BlockLayout::kVariable);

// Output tables' alignment in the host output buffer with direct writes.
constexpr uint64_t kTableAlignment = kDirectIoAlignment;
static_assert(kBlockFooterSize == BlockLayout::kFooterSize);

// One output table as planned: its data blocks are encoded into
// out[out_offset, out_offset + data_bytes), its filter block (with bloom
// bits on) with its trailer right after them, filter_bytes.
struct PlannedTable {
  uint64_t out_offset = 0;
  uint64_t data_bytes = 0;
  uint64_t first_block = 0;  // its data blocks: EncodeJob::blocks[first_block, end_block)
  uint64_t end_block = 0;
  uint64_t first_kept = 0;  // its first entry's kept position
  bool has_filter = false;
  uint64_t filter_keys = 0;   // the keys FilterBuilder would hold
  uint64_t filter_bytes = 0;  // its filter block with the trailer (0: none)
  TableProperties props;
  BlockBuilder index;

  // Data blocks and filter block: the bytes the device encodes.
  uint64_t encoded_bytes() const { return data_bytes + filter_bytes; }
};

// Walks the kept entries as CpuCompactionExecutor + TableBuilder would, with
// sizes only (docs/FORMAT.md, "Data blocks" boundary rule; OutputSplitter
// over EstimateTableFileSize; each open data block's exact layout from a
// BlockLayoutTracker), filling the EncodeJob and the tables' index blocks,
// properties and filters. Mirrors TableBuilder::Add/FlushDataBlock/
// EstimatedFileSize/Finish step for step; the executor tests check the
// result byte for byte. Per entry it reads only the device's dense plan
// inputs (plan_common.h); a key itself only where a table or a block ends.
class Planner {
 public:
  Planner(const CompactionJobSpec& spec, const JobInput& input, const KeySortOutput& sorted,
          std::vector<EncodeBlock>* blocks, std::vector<EncodeFilter>* filters)
      : spec_(spec),
        key_arena_(reinterpret_cast<const char*>(input.keys.key_arena)),
        plan_(sorted.plan),
        blocks_(blocks),
        filters_(filters),
        splitter_(spec.compaction) {
    const Comparator* named = spec.table_options.user_comparator != nullptr
                                  ? spec.table_options.user_comparator
                                  : spec.table_options.comparator;
    comparator_name_ = named->Name();
    const int bits = spec.table_options.bloom_bits_per_key;
    // MaxGrowth's filter term: BloomNumLines(n + 1) - BloomNumLines(n) <=
    // ceil(bits / 512) for n >= 1 (ceil(a + b) <= ceil(a) + ceil(b), and the
    // max(1, ...) only raises BloomNumLines(n)), 64 bytes a line.
    growth_fixed_ = 256 + (bits > 0 ? uint64_t{kBloomLineBytes} *
                                          (static_cast<uint64_t>(bits) / kBloomLineBits + 1)
                                    : 0);
  }

  // Kept entry k (output position k; called for k = 0, 1, ... in order).
  Status Add(uint64_t k) {
    const PlanEntry& e = plan_[k];
    const uint64_t key_size = e.key_size;
    const uint32_t value_size = e.value_size;
    const uint64_t shared = e.shared;
    const bool same_user_key = (e.flags & kPlanSameUserKey) != 0;
    const uint64_t sequence = e.trailer >> 8;
    const auto type = static_cast<ValueType>(e.trailer & 0xff);
    // The exact estimate only where the O(1) bound reaches the split size
    // (OutputSplitter::OutputBytes: the decision is the exact one's). The
    // splitter compares current with max_output_file_size only, so while
    // size_upper_ (>= the bound >= the exact estimate) is below it, passing
    // it decides the same and the bound need not be computed.
    uint64_t current = 0;
    if (table_ != nullptr) {
      if (size_upper_valid_ && size_upper_ < spec_.compaction->max_output_file_size()) {
        current = size_upper_;
      } else {
        const uint64_t estimate_bound = EstimatedFileSize(/*bound=*/true);
        size_upper_ = estimate_bound;
        size_upper_valid_ = true;
        current = splitter_.OutputBytes(estimate_bound,
                                        [this] { return EstimatedFileSize(/*bound=*/false); });
      }
    }
    if (splitter_.ShouldStopBeforeCounted(same_user_key, e.grandparents, e.boundaries, current) &&
        table_ != nullptr) {
      Status s = FinishTable();
      if (!s.ok()) return s;
    }
    if (table_ == nullptr) StartTable();

    const uint64_t entry_size = key_size + value_size + 8;
    TableProperties& p = table_->props;
    if (p.num_entries > 0) {
      // TableBuilder's rule floor(P_i / B) != floor(P_{i-1} / B), with
      // next_multiple_ = (floor(P_{i-1} / B) + 1) * B (P_i > P_{i-1}).
      if (prefix_next_ >= next_multiple_) {
        Status s = FlushBlock();
        if (!s.ok()) return s;
      }
    } else {
      const Slice key = KeyAt(k);
      table_->first_kept = k;
      p.smallest_key.assign(key.data(), key.size());
      p.smallest_seqno = sequence;
      p.largest_seqno = sequence;
    }
    // TableBuilder's guard (BlockBuilder::SizeBoundWith, then SizeWith).
    const uint64_t n = block_.NumEntries();
    const uint64_t bound = BlockBuilder::SizeBound(block_key_bytes_ + key_size,
                                                   block_value_bytes_ + value_size, n + 1);
    if (bound > BlockBuilder::kMaxBlockSize &&
        block_.SizeWithSized(key_size, value_size, shared) > BlockBuilder::kMaxBlockSize) {
      // TableBuilder fails such a job; the CPU executor reruns it and says so.
      return Status::NotSupported("gpu: encode: entry too large for a block");
    }
    prefix_prev_ = prefix_next_;
    prefix_next_ += entry_size;
    if (prefix_prev_ >= next_multiple_) {
      const uint64_t bs = spec_.table_options.block_size;
      next_multiple_ = (prefix_prev_ / bs + 1) * bs;
    }

    if (n == 0) block_first_ = k;
    block_.AddSized(key_size, value_size, shared);
    block_key_bytes_ += key_size;
    block_value_bytes_ += value_size;

    last_ = k;
    last_key_size_ = key_size;
    // FilterBuilder::AddKey skips a repeated user key (the table's first
    // key is always added); the device sets the bits (FilterKeyHash).
    if (table_->has_filter && (!same_user_key || p.num_entries == 0)) table_->filter_keys++;
    p.num_entries++;
    if (type == ValueType::kDeletion) p.num_deletions++;
    p.raw_key_bytes += key_size;
    p.raw_value_bytes += value_size;
    p.smallest_seqno = std::min(p.smallest_seqno, sequence);
    p.largest_seqno = std::max(p.largest_seqno, sequence);
    // The bound before the next entry (invalid after StartTable above).
    if (size_upper_valid_) size_upper_ += MaxGrowth(key_size, value_size);
    return Status::OK();
  }

  // Adds kept entries k, k + 1, ... (before end) that Add would add without
  // a decision of its own: inside the open data block (no block boundary
  // before them), with the open table's size bound below the split size, no
  // block near kMaxBlockSize, and no split for a boundary or grandparent
  // overlap (OutputSplitter::SkipCounted). Returns how many it added (0:
  // none; Add decides the next entry). The same state as Add for each, from
  // one tight pass over the dense plan entries instead of a full Add per
  // entry: about 30 entries of 128-byte values per 4 KiB block share one
  // Add and one run (the executor tests check the output byte for byte).
  uint64_t AddRun(uint64_t k, uint64_t end) {
    if (table_ == nullptr || !size_upper_valid_ || block_.empty()) return 0;
    const uint64_t max_size = spec_.compaction->max_output_file_size();
    // One pass: how far the run goes, summing on the way what Add would
    // add for each entry; nothing changes unless the run is taken.
    TableProperties& props = table_->props;
    uint64_t e = k;
    uint64_t prefix = prefix_next_;
    uint64_t upper = size_upper_;
    uint64_t key_bytes = block_key_bytes_;
    uint64_t value_bytes = block_value_bytes_;
    uint64_t n = block_.NumEntries();
    const uint64_t first_key_size = block_.first_key_size();
    const uint64_t first_value_size = block_.first_value_size();
    uint64_t min_shared = ~uint64_t{0};
    bool keys_of_first_size = true;
    bool values_of_first_size = true;
    uint64_t filter_keys = 0;
    uint64_t deletions = 0;
    uint64_t smallest_seqno = props.smallest_seqno;
    uint64_t largest_seqno = props.largest_seqno;
    for (; e < end; ++e) {
      const PlanEntry& p = plan_[e];
      // Add's block boundary and split-size tests, and its block-size guard.
      if (prefix >= next_multiple_ || upper >= max_size) break;
      const uint64_t with_key_bytes = key_bytes + p.key_size;
      const uint64_t with_value_bytes = value_bytes + p.value_size;
      if (BlockBuilder::SizeBound(with_key_bytes, with_value_bytes, n + 1) >
          BlockBuilder::kMaxBlockSize) {
        break;  // the run ends before the entry: Add applies the guard
      }
      key_bytes = with_key_bytes;
      value_bytes = with_value_bytes;
      ++n;
      upper += MaxGrowth(p.key_size, p.value_size);
      prefix += uint64_t{p.key_size} + p.value_size + 8;
      // BlockLayoutTracker::AddSized's, FilterBuilder's and the properties'.
      min_shared = std::min<uint64_t>(min_shared, p.shared);
      keys_of_first_size &= p.key_size == first_key_size;
      values_of_first_size &= p.value_size == first_value_size;
      filter_keys += (p.flags & kPlanSameUserKey) == 0;
      deletions += static_cast<ValueType>(p.trailer & 0xff) == ValueType::kDeletion;
      const uint64_t sequence = p.trailer >> 8;
      smallest_seqno = std::min(smallest_seqno, sequence);
      largest_seqno = std::max(largest_seqno, sequence);
    }
    if (e == k || !splitter_.SkipCounted(plan_[e - 1].grandparents, plan_[e - 1].boundaries)) {
      return 0;
    }
    // A block's last key is read where the block ends (its index entry,
    // FlushBlock): a cache miss per block, since the key arena is in input
    // order. The run's own last key is asked for now, too late to hide much;
    // so are the keys where the next block would end if it held as many
    // entries as this one (and its neighbours), a block ahead, and the plan
    // entries that hold where those keys are, two blocks ahead.
    __builtin_prefetch(key_arena_ + plan_[e - 1].key_offset);
    const uint64_t block_entries = e - block_first_;
    const uint64_t next_end = e - 1 + block_entries;
    for (uint64_t j = next_end - 1; j <= next_end + 1 && j < end; ++j) {
      __builtin_prefetch(key_arena_ + plan_[j].key_offset);
    }
    for (uint64_t j = next_end + block_entries - 1; j <= next_end + block_entries + 1 && j < end;
         ++j) {
      __builtin_prefetch(&plan_[j]);
    }
    block_.AddSizedRun(e - k, key_bytes - block_key_bytes_, value_bytes - block_value_bytes_,
                       min_shared, keys_of_first_size, values_of_first_size);
    const PlanEntry& last = plan_[e - 1];
    if (table_->has_filter) table_->filter_keys += filter_keys;
    props.num_entries += e - k;
    props.num_deletions += deletions;
    props.raw_key_bytes += key_bytes - block_key_bytes_;
    props.raw_value_bytes += value_bytes - block_value_bytes_;
    props.smallest_seqno = smallest_seqno;
    props.largest_seqno = largest_seqno;
    block_key_bytes_ = key_bytes;
    block_value_bytes_ = value_bytes;
    prefix_prev_ = prefix - (uint64_t{last.key_size} + last.value_size + 8);
    prefix_next_ = prefix;
    size_upper_ = upper;
    last_ = e - 1;
    last_key_size_ = last.key_size;
    return e - k;
  }

  Status Finish() {
    if (table_ != nullptr) {
      Status s = FinishTable();
      if (!s.ok()) return s;
    }

    return Status::OK();
  }

  std::vector<std::unique_ptr<PlannedTable>>& tables() { return tables_; }
  // The planned output's bytes (data blocks with trailers), from 0; with
  // direct writes rounded up to kTableAlignment, so that ranges laid out
  // one after another keep their tables aligned.
  uint64_t out_size() const { return AlignTable(out_cursor_); }

 private:
  // TableBuilder::EstimatedFileSize, or with bound its EstimatedFileSizeBound.
  uint64_t EstimatedFileSize(bool bound) {
    TableSizeState st;
    st.offset = offset_;
    if (block_.empty()) {
      st.index_block_size = table_->index.CurrentSizeEstimate();
    } else {
      static const char kHandle[BlockHandle::kEncodedLength] = {};  // only its size matters
      const Slice handle(kHandle, sizeof(kHandle));
      if (bound) {
        // BlockBuilder::CurrentSizeBound of the open block, SizeBoundWith of the index.
        st.index_block_size = table_->index.SizeBoundWith(LastKeyOfSize(), handle);
        st.data_block_size =
            BlockBuilder::SizeBound(block_key_bytes_, block_value_bytes_, block_.NumEntries());
      } else {
        st.index_block_size = table_->index.SizeWith(KeyAt(last_), handle);
        st.data_block_size = block_.Size();  // AddSized keeps Layout() exact
      }
    }
    if (table_->has_filter && table_->props.num_entries > 0) {
      st.filter_encoded_size = FilterContentsSize(table_->filter_keys);
    }
    // EstimateTableFileSize = fixed part (key sizes only; the comparator
    // name and smallest key are fixed per table) + variable part.
    if (fixed_part_key_size_ != last_key_size_) {
      fixed_part_key_size_ = last_key_size_;
      fixed_part_ = TableSizeFixedPart(table_->props.comparator_name.size(),
                                       table_->props.smallest_key.size(), last_key_size_);
    }
    return fixed_part_ + TableSizeVariablePart(st);
  }

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
  uint64_t MaxGrowth(uint64_t key_size, uint64_t value_size) const {
    return 4 * key_size + value_size + growth_fixed_;
  }

  void StartTable() {
    tables_.push_back(std::make_unique<PlannedTable>());
    table_ = tables_.back().get();
    out_cursor_ = AlignTable(out_cursor_);
    table_->out_offset = out_cursor_;
    table_->first_block = blocks_->size();
    table_->props.comparator_name = comparator_name_;
    table_->has_filter = spec_.table_options.bloom_bits_per_key > 0;
    offset_ = 0;
    prefix_prev_ = 0;
    prefix_next_ = 0;
    next_multiple_ = spec_.table_options.block_size;
    fixed_part_key_size_ = ~uint64_t{0};  // none cached for this table
    size_upper_valid_ = false;            // Add computes it at the second entry
    ResetBlock();
  }

  void ResetBlock() {
    block_.Reset();
    block_key_bytes_ = 0;
    block_value_bytes_ = 0;
  }

  // Closes the open data block: its layout and its index entry.
  Status FlushBlock() {
    if (block_.empty()) return Status::OK();
    const BlockLayout l = block_.Layout();
    EncodeBlock b;
    b.out_offset = table_->out_offset + offset_;
    b.first = block_first_;
    b.n = l.n;
    b.prefix_size = l.prefix_size;
    b.key_width = l.key_width;
    b.value_width = l.value_width;
    b.offset_width = l.offset_width;
    b.key_bytes = static_cast<uint32_t>(l.key_bytes);
    b.value_bytes = static_cast<uint32_t>(l.value_bytes);
    if (EncodedBlockSize(b) != l.size || block_first_ + l.n != last_ + 1) {
      return Status::Corruption("gpu: encode: planned block differs from its layout");
    }
    blocks_->push_back(b);
    BlockHandle handle;
    handle.offset = offset_;
    handle.size = l.size;
    offset_ += handle.size + kBlockTrailerSize;
    table_->props.num_data_blocks++;
    table_->props.data_bytes += handle.size + kBlockTrailerSize;
    char encoded[BlockHandle::kEncodedLength];
    handle.EncodeTo(encoded);
    table_->index.Add(KeyAt(last_), Slice(encoded, sizeof(encoded)));
    ResetBlock();
    return Status::OK();
  }

  // Kept entry k's internal key, in the key arena.
  Slice KeyAt(uint64_t k) const {
    const PlanEntry& e = plan_[k];
    return Slice(key_arena_ + e.key_offset, e.key_size);
  }

  // A key of the last entry's size (SizeBoundWith reads only its size).
  Slice LastKeyOfSize() {
    if (size_only_key_.size() < last_key_size_) size_only_key_.resize(last_key_size_);
    return Slice(size_only_key_.data(), last_key_size_);
  }

  // FilterBuilder::EncodedSize for num_keys keys.
  uint64_t FilterContentsSize(uint64_t num_keys) const {
    return BloomFilterSize(BloomNumLines(num_keys, spec_.table_options.bloom_bits_per_key));
  }

  Status FinishTable() {
    Status s = FlushBlock();
    if (!s.ok()) return s;
    const Slice largest = KeyAt(last_);
    table_->props.largest_key.assign(largest.data(), largest.size());
    table_->data_bytes = offset_;
    table_->end_block = blocks_->size();
    if (table_->has_filter) {  // TableBuilder: a filter block when the table has entries
      const int bits = spec_.table_options.bloom_bits_per_key;
      EncodeFilter f;
      f.out_offset = table_->out_offset + offset_;
      f.first = table_->first_kept;
      f.end = last_ + 1;
      f.num_lines = static_cast<uint32_t>(BloomNumLines(table_->filter_keys, bits));
      f.num_probes = static_cast<uint32_t>(BloomNumProbes(bits));
      if (EncodedFilterSize(f) != FilterContentsSize(table_->filter_keys)) {
        return Status::Corruption("gpu: encode: planned filter differs from its layout");
      }
      filters_->push_back(f);
      table_->filter_bytes = EncodedFilterSize(f) + kBlockTrailerSize;
    }
    out_cursor_ += table_->encoded_bytes();
    table_ = nullptr;
    size_upper_valid_ = false;
    return Status::OK();
  }

  const CompactionJobSpec& spec_;
  const char* const key_arena_;               // the job's keys (PlanEntry::key_offset)
  const PlanEntry* const plan_;               // per kept entry
  std::vector<EncodeBlock>* const blocks_;    // the planned data blocks, appended
  std::vector<EncodeFilter>* const filters_;  // the planned filters, appended
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
  std::string size_only_key_;                    // LastKeyOfSize's bytes
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
  // With direct writes each table starts at a multiple of kTableAlignment of
  // the output buffer (whose base the device aligns to a page): the file
  // writer then sends the table's whole 4 KiB blocks to the disk straight
  // from the buffer (posix_direct_writable_file.h). The padding (under
  // 4 KiB per table) is never written to a file.
  uint64_t AlignTable(uint64_t offset) const {
    if (!spec_.table_options.use_direct_writes) return offset;
    return AlignUp(offset, kTableAlignment);
  }
};

// Appends block contents and its trailer to dst; returns its handle at *offset
// and advances *offset.
BlockHandle AppendBlock(const Slice& contents, uint64_t* offset, std::string* dst) {
  BlockHandle handle;
  handle.offset = *offset;
  handle.size = contents.size();
  dst->append(contents.data(), contents.size());
  AppendBlockTrailer(contents, dst);
  *offset += contents.size() + kBlockTrailerSize;
  return handle;
}

// Properties and index blocks and the footer of a planned table (its
// filter block, if any, was encoded after its data blocks).
std::string TableTail(PlannedTable* t) {
  std::string tail;
  Footer footer;
  uint64_t offset = t->encoded_bytes();
  if (t->filter_bytes > 0) {
    footer.filter_handle.offset = t->data_bytes;
    footer.filter_handle.size = t->filter_bytes - kBlockTrailerSize;
  }
  std::string props;
  EncodePropertiesBlock(t->props, &props);
  footer.properties_handle = AppendBlock(props, &offset, &tail);
  footer.index_handle = AppendBlock(t->index.Finish(), &offset, &tail);
  footer.EncodeTo(&tail);
  return tail;
}

// The files of one EncodeOutputsOnDevice call: numbers taken in table
// order at construction; each released table's tail (filter, properties,
// index, footer) built and its file written, fsynced and closed on writer
// threads (OrderedWorkers) while the caller goes on; Finish joins them and
// reports into the result. Deferred (PendingWrites), Finish comes later,
// after other work overlapped the writes.
class TableWrites final : public PendingWrites {
 public:
  TableWrites(const CompactionJobSpec& spec, std::vector<std::unique_ptr<PlannedTable>> tables,
              const uint8_t* out, size_t helpers, CompactionJobResult* result)
      : spec_(spec),
        tables_(std::move(tables)),
        out_(out),
        result_(result),
        numbers_(tables_.size()),
        written_(tables_.size()),
        helpers_(helpers) {
    for (uint64_t& n : numbers_) n = spec.new_file_number();
    workers_ = std::make_unique<OrderedWorkers>(helpers, [this](size_t i) { Write(i); });
  }
  ~TableWrites() override {
    if (!finished_) (void)Finish();
  }

  const PlannedTable& table(size_t i) const { return *tables_[i]; }
  // Hands tables [0, end) to the writers.
  void Release(size_t end) {
    if (released_ == 0 && end > 0) first_release_ = std::chrono::steady_clock::now();
    released_ = end;
    workers_->Release(end);
  }
  bool write_failed() const { return write_failed_.load(); }
  // The device has encoded its last chunk (or failed: encode_status).
  void EncodeDone(const Status& encode_status) {
    encode_status_ = encode_status;
    encoded_ = std::chrono::steady_clock::now();
  }

  // Stage times: "gpu_encode" is the device's (counted by the caller); the
  // writes that ran while other work went on (the device encoding later
  // chunks; deferred, the next chunk of a job) are "write_overlapped" (wall,
  // from the first release to the start of Finish: not on the job's
  // critical path); the wall time Finish waits is split into "encode" (the
  // threads' tail building after its start, summed, over their number) and
  // "write".
  Status Finish() override {
    finished_ = true;
    const auto wait_start = std::max(std::chrono::steady_clock::now(), encoded_);
    {
      CpuStageScope cpu(result_, "write");  // the caller writes beside the helpers
      *cpu.helpers() += workers_->Close();
    }
    const uint64_t tail_wall = MicrosSince(wait_start);
    std::chrono::steady_clock::duration tails{0};
    for (size_t i = 0; i < released_; ++i) {
      const Written& w = written_[i];
      if (w.tail_end > wait_start) tails += w.tail_end - std::max(w.tail_start, wait_start);
    }
    const uint64_t tail_micros =
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(tails).count());
    const uint64_t encode_wall = std::min(tail_wall, tail_micros / (helpers_ + 1));
    result_->stage_micros["encode"] += encode_wall;
    result_->stage_micros["write"] += tail_wall - encode_wall;
    if (released_ > 0) {
      result_->stage_micros["write_overlapped"] += static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(wait_start - first_release_)
              .count());
    }
    for (size_t i = 0; i < released_; ++i) {
      if (written_[i].created) result_->outputs.push_back(written_[i].meta);
    }
    for (size_t i = 0; i < released_; ++i) {
      if (!written_[i].status.ok()) return written_[i].status;
    }
    if (!encode_status_.ok()) return encode_status_;
    for (const Written& w : written_) {
      result_->bytes_written += w.meta.file_size;
      result_->output_entries += w.meta.num_entries;
    }
    return Status::OK();
  }

 private:
  struct Written {
    Status status;
    bool created = false;
    FileMetaData meta;
    std::chrono::steady_clock::time_point tail_start;  // its tail's build
    std::chrono::steady_clock::time_point tail_end;
  };

  void Write(size_t i) {
    PlannedTable* table = tables_[i].get();
    Written& w = written_[i];
    w.tail_start = std::chrono::steady_clock::now();
    const std::string tail = TableTail(table);
    w.tail_end = std::chrono::steady_clock::now();
    w.meta = OutputFileMeta(numbers_[i], table->encoded_bytes() + tail.size(), table->props);
    w.status = WriteOutputTable(
        spec_, numbers_[i],
        {Slice(reinterpret_cast<const char*>(out_) + table->out_offset, table->encoded_bytes()),
         Slice(tail)},
        &w.created);
    if (!w.status.ok()) write_failed_.store(true);
  }

  const CompactionJobSpec& spec_;
  const std::vector<std::unique_ptr<PlannedTable>> tables_;
  const uint8_t* const out_;
  CompactionJobResult* const result_;
  std::vector<uint64_t> numbers_;
  std::vector<Written> written_;
  const size_t helpers_;
  std::unique_ptr<OrderedWorkers> workers_;
  std::atomic<bool> write_failed_{false};
  size_t released_ = 0;  // tables handed to the writers
  std::chrono::steady_clock::time_point first_release_;
  std::chrono::steady_clock::time_point encoded_;
  Status encode_status_;
  bool finished_ = false;
};

}  // namespace

Status EncodeOutputsOnDevice(const CompactionJobSpec& spec, const JobInput& input,
                             const KeySortOutput& sorted, KeySortDevice* device,
                             uint64_t chunk_bytes, EncodeJob* scratch,
                             const std::function<Status()>& before_output,
                             std::unique_ptr<PendingWrites>* defer, CompactionJobResult* result) {
  if (spec.table_options.block_size == 0 ||
      spec.table_options.compression != CompressionType::kNone) {
    return Status::NotSupported("gpu: encode: table options the device encoder does not take");
  }
  if (sorted.plan == nullptr && !sorted.kept.empty()) {
    return Status::InvalidArgument("gpu: encode: the device computed no plan inputs");
  }
  auto t = std::chrono::steady_clock::now();
  std::optional<CpuStageScope> plan_cpu(std::in_place, result, "plan");
  EncodeJob& job = *scratch;
  job.arena = input.keys.arena;
  job.arena_size = input.keys.arena_size;
  job.key_arena = input.keys.key_arena;
  job.key_arena_size = input.keys.key_arena_size;
  job.blocks.clear();
  job.filters.clear();
  job.out_size = 0;
  // The subcompaction ranges (where PlanEntry::boundaries steps up) are
  // planned on separate threads: OutputSplitter cuts at each range's first
  // key, and a fresh splitter and planner reach the same state there
  // (compaction.h, step 4), as the CPU executor's subcompactions rely on.
  // Then the ranges' blocks and tables are laid out one after another.
  // The ranges' starts come from the device (boundary_starts), since the
  // plan entries are still on their way back: each range's thread waits
  // only for the entries it reaches (WaitPlan).
  const uint64_t n = sorted.kept.size();
  if (sorted.boundary_starts.size() != spec.compaction->subcompaction_boundaries().size()) {
    return Status::InvalidArgument("gpu: encode: the device gave no subcompaction range starts");
  }
  std::vector<uint64_t> starts;
  if (!SubcompactionRangeStarts(sorted.boundary_starts, n, &starts)) {
    return Status::InvalidArgument("gpu: encode: subcompaction range starts out of order");
  }
  const size_t ranges = starts.size() - 1;
  struct RangePlan {
    std::vector<EncodeBlock> blocks;
    std::vector<EncodeFilter> filters;
    std::vector<std::unique_ptr<PlannedTable>> tables;
    uint64_t out_size = 0;
    Status status;
  };
  std::vector<RangePlan> plans(ranges);
  *plan_cpu->helpers() += ParallelFor(ranges, ComputeThreads(ranges), [&](size_t r) {
    RangePlan& rp = plans[r];
    Planner planner(spec, input, sorted, &rp.blocks, &rp.filters);
    Status st;
    uint64_t ready = starts[r];  // the plan entries [starts[r], ready) are on the host
    for (uint64_t k = starts[r]; k < starts[r + 1];) {
      if (k >= ready) {
        st = device->WaitPlan(k, &ready);
        if (__builtin_expect(!st.ok(), 0)) break;
      }
      st = planner.Add(k);
      if (__builtin_expect(!st.ok(), 0)) break;
      ++k;
      // A run never reads an entry past `ready`; one cut there goes on
      // entry by entry (Add), which is the same plan.
      k += planner.AddRun(k, std::min(starts[r + 1], ready));
    }
    rp.status = st.ok() ? planner.Finish() : st;
    rp.out_size = planner.out_size();
    rp.tables = std::move(planner.tables());
  });
  std::vector<std::unique_ptr<PlannedTable>> tables;
  for (RangePlan& rp : plans) {
    if (!rp.status.ok()) return rp.status;
    for (EncodeBlock& b : rp.blocks) b.out_offset += job.out_size;
    for (EncodeFilter& f : rp.filters) f.out_offset += job.out_size;
    for (auto& t : rp.tables) {
      t->out_offset += job.out_size;
      t->first_block += job.blocks.size();
      t->end_block += job.blocks.size();
      tables.push_back(std::move(t));
    }
    job.blocks.insert(job.blocks.end(), rp.blocks.begin(), rp.blocks.end());
    job.filters.insert(job.filters.end(), rp.filters.begin(), rp.filters.end());
    job.out_size += rp.out_size;
  }
  result->stage_micros["plan"] += MicrosSince(t);
  plan_cpu.reset();

  Status s = before_output ? before_output() : Status::OK();
  if (!s.ok()) return s;
  // "output": the host output buffer, the tables' file numbers, the writers.
  std::optional<CpuStageScope> output_cpu(std::in_place, result, "output");
  uint8_t* out = nullptr;
  s = device->HostOutput(job.out_size, &out);
  if (!s.ok()) return s;

  // Chunks of whole tables in table order, each of at least chunk_bytes of
  // data blocks (the last one: the rest); at least one chunk, so the device
  // sees the encode stage even when nothing is kept.
  const size_t nt = tables.size();
  std::vector<size_t> chunk_end;  // table index after each chunk
  uint64_t chunk_data = 0;
  for (size_t i = 0; i < nt; ++i) {
    chunk_data += tables[i]->encoded_bytes();
    if (chunk_data >= std::max<uint64_t>(chunk_bytes, 1) || i + 1 == nt) {
      chunk_end.push_back(i + 1);
      chunk_data = 0;
    }
  }
  if (chunk_end.empty()) chunk_end.push_back(0);

  // Each chunk is encoded on the device, then its tables' tails (filter,
  // properties, index, footer) are built and their files written, fsynced
  // and closed on the writer threads while the device encodes the next
  // chunk. File numbers are taken in table order first; a created file is
  // listed in result->outputs (in table order) even when a later step
  // fails, also a failed encode of a later chunk (the caller removes them);
  // the first failure in table order among the written tables is returned,
  // else the encode's. A write failure stops the encoding of later chunks.
  // The caller encodes while the helpers write; it joins them for what is
  // left after the last chunk. With several chunks, or writes deferred past
  // the return, at least one helper, so writes overlap other work.
  const size_t threads = FileThreads(nt);
  const size_t helpers =
      std::max<size_t>(threads - 1, chunk_end.size() > 1 || defer != nullptr ? 1 : 0);
  auto writes = std::make_unique<TableWrites>(spec, std::move(tables), out, helpers, result);
  Status encode_status;
  output_cpu.reset();
  std::optional<CpuStageScope> encode_cpu(std::in_place, result, "gpu_encode");
  for (size_t c = 0; c < chunk_end.size() && !writes->write_failed(); ++c) {
    const size_t first_table = c == 0 ? 0 : chunk_end[c - 1];
    const uint64_t first_block = first_table < nt ? writes->table(first_table).first_block : 0;
    const uint64_t end_block = chunk_end[c] > 0 ? writes->table(chunk_end[c] - 1).end_block : 0;
    encode_status = device->EncodeBlocks(job, first_block, end_block, out, &result->stage_micros);
    if (!encode_status.ok()) break;
    writes->Release(chunk_end[c]);
  }
  device->ReleaseEncodeInput();
  encode_cpu.reset();
  writes->EncodeDone(encode_status);
  if (defer != nullptr && encode_status.ok() && !writes->write_failed()) {
    *defer = std::move(writes);
    return Status::OK();
  }
  return writes->Finish();
}

}  // namespace gpu
}  // namespace accelkv
