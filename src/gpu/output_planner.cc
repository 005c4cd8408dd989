#include "gpu/output_planner.h"

#include <algorithm>

#include "table/filter.h"
#include "table/format.h"
#include "table/table_builder.h"
#include "util/internal_key.h"

namespace accelkv {
namespace gpu {

static_assert(kVariableWidth == BlockLayout::kVariable);
static_assert(kBlockFooterSize == BlockLayout::kFooterSize);
static_assert(static_cast<int>(ValueType::kDeletion) == 0);  // MakeBlockRun's tombstone test

std::string OutputComparatorName(const CompactionJobSpec& spec) {
  const Comparator* named = spec.table_options.user_comparator != nullptr
                                ? spec.table_options.user_comparator
                                : spec.table_options.comparator;
  return named->Name();
}

void SetTailLayout(const TableProperties& props, const BlockLayout& index, EncodeTable* t) {
  t->num_entries = props.num_entries;
  t->num_deletions = props.num_deletions;
  t->raw_key_bytes = props.raw_key_bytes;
  t->raw_value_bytes = props.raw_value_bytes;
  t->smallest_seqno = props.smallest_seqno;
  t->largest_seqno = props.largest_seqno;
  t->smallest_key_size = static_cast<uint32_t>(props.smallest_key.size());
  t->largest_key_size = static_cast<uint32_t>(props.largest_key.size());
  t->comparator_size = static_cast<uint32_t>(props.comparator_name.size());
  t->index_prefix = index.prefix_size;
  t->index_key_width = index.key_width;
  t->index_offset_width = index.offset_width;
  t->index_key_bytes = index.key_bytes;
}

OutputPlanner::OutputPlanner(const CompactionJobSpec& spec, const JobInput& input,
                             const KeySortOutput& sorted, std::vector<EncodeBlock>* blocks,
                             std::vector<EncodeFilter>* filters,
                             std::vector<EncodeTable>* encode_tables)
    : spec_(spec),
      key_arena_(reinterpret_cast<const char*>(input.keys.key_arena)),
      plan_(sorted.plan),
      blocks_(blocks),
      filters_(filters),
      encode_tables_(encode_tables),
      splitter_(spec.compaction) {
  comparator_name_ = OutputComparatorName(spec);
  const int bits = spec.table_options.bloom_bits_per_key;
  // MaxGrowth's filter term: BloomNumLines(n + 1) - BloomNumLines(n) <=
  // ceil(bits / 512) for n >= 1 (ceil(a + b) <= ceil(a) + ceil(b), and the
  // max(1, ...) only raises BloomNumLines(n)), 64 bytes a line.
  growth_fixed_ = 256 + (bits > 0 ? uint64_t{kBloomLineBytes} *
                                        (static_cast<uint64_t>(bits) / kBloomLineBits + 1)
                                  : 0);
}

Status OutputPlanner::Add(uint64_t k, const PlanEntry& e) {
  const uint64_t key_size = e.key_size;
  const uint32_t value_size = e.value_size;
  const uint64_t shared = e.shared;
  const bool same_user_key = (e.flags & kPlanSameUserKey) != 0;
  const uint64_t sequence = e.trailer >> 8;
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

  TableProperties& p = table_->props;
  if (p.num_entries > 0) {
    // TableBuilder's rule floor(P_i / B) != floor(P_{i-1} / B), with
    // next_multiple_ = (floor(P_{i-1} / B) + 1) * B (P_i > P_{i-1}).
    if (prefix_next_ >= next_multiple_) {
      Status s = FlushBlock();
      if (!s.ok()) return s;
    }
  } else {
    const Slice key(key_arena_ + e.key_offset, key_size);
    table_->first_kept = k;
    p.smallest_key.assign(key.data(), key.size());
    p.smallest_seqno = sequence;
    p.largest_seqno = sequence;
  }
  // TableBuilder's guard (BlockBuilder::SizeBoundWith, then SizeWith).
  const uint64_t n = block_.NumEntries();
  const uint64_t bound =
      BlockBuilder::SizeBound(block_key_bytes_ + key_size, block_value_bytes_ + value_size, n + 1);
  if (bound > BlockBuilder::kMaxBlockSize &&
      block_.SizeWithSized(key_size, value_size, shared) > BlockBuilder::kMaxBlockSize) {
    // TableBuilder fails such a job; the CPU executor reruns it and says so.
    return Status::NotSupported("gpu: encode: entry too large for a block");
  }
  AppendEntry(k, e);
  return Status::OK();
}

void OutputPlanner::AppendEntry(uint64_t k, const PlanEntry& e) {
  const uint64_t key_size = e.key_size;
  const uint32_t value_size = e.value_size;
  const uint64_t sequence = e.trailer >> 8;
  prefix_prev_ = prefix_next_;
  prefix_next_ += key_size + value_size + 8;
  if (prefix_prev_ >= next_multiple_) {
    const uint64_t bs = spec_.table_options.block_size;
    next_multiple_ = (prefix_prev_ / bs + 1) * bs;
  }

  if (block_.empty()) block_first_ = k;
  block_.AddSized(key_size, value_size, e.shared);
  block_key_bytes_ += key_size;
  block_value_bytes_ += value_size;

  last_ = k;
  last_key_size_ = key_size;
  last_key_offset_ = e.key_offset;
  // FilterBuilder::AddKey skips a repeated user key (the table's first
  // key is always added); the device sets the bits (FilterKeyHash).
  TableProperties& p = table_->props;
  if (table_->has_filter && ((e.flags & kPlanSameUserKey) == 0 || p.num_entries == 0)) {
    table_->filter_keys++;
  }
  p.num_entries++;
  if (static_cast<ValueType>(e.trailer & 0xff) == ValueType::kDeletion) p.num_deletions++;
  p.raw_key_bytes += key_size;
  p.raw_value_bytes += value_size;
  p.smallest_seqno = std::min(p.smallest_seqno, sequence);
  p.largest_seqno = std::max(p.largest_seqno, sequence);
  // The bound before the next entry (invalid after StartTable).
  if (size_upper_valid_) size_upper_ += MaxGrowth(key_size, value_size);
}

void OutputPlanner::EnsureSizeUpper() {
  // The bound Add would compute before the next entry (it does so at a
  // table's second entry): any upper bound of the estimate decides as the
  // exact one does (Add).
  if (size_upper_valid_) return;
  size_upper_ = EstimatedFileSize(/*bound=*/true);
  size_upper_valid_ = true;
}

uint64_t OutputPlanner::AddRun(uint64_t k, uint64_t end) {
  if (table_ == nullptr || block_.empty()) return 0;
  EnsureSizeUpper();
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
  last_key_offset_ = last.key_offset;
  return e - k;
}

Status OutputPlanner::AddBlockRun(const BlockRun& b, bool* taken) {
  *taken = false;
  if (table_ == nullptr || block_.NumEntries() != 1 || block_first_ != b.first ||
      last_ != b.first || b.end <= b.first) {
    return Status::Corruption("gpu: plan: device block record out of step with the plan");
  }
  const uint64_t n = b.end - b.first - 1;  // the run's entries
  if (n == 0) {
    *taken = true;
    return Status::OK();
  }
  EnsureSizeUpper();
  // AddRun's tests for each entry of the run, at the run's last entry (all
  // grow along it): the table's size bound before it below the split
  // size, the block's size bound under kMaxBlockSize, the splitter's
  // boundary and grandparent steps. Where one fails the entries go by Add
  // and AddRun (the caller), which decide where they stop.
  const uint64_t last_growth = 4 * uint64_t{b.last_key_size} + b.last_value_size;
  const uint64_t upper_before_last =
      size_upper_ + (b.growth - last_growth) + (n - 1) * growth_fixed_;
  if (upper_before_last >= spec_.compaction->max_output_file_size()) return Status::OK();
  const uint64_t key_bytes = block_key_bytes_ + b.key_bytes;
  const uint64_t value_bytes = block_value_bytes_ + b.value_bytes;
  if (BlockBuilder::SizeBound(key_bytes, value_bytes, n + 1) > BlockBuilder::kMaxBlockSize) {
    return Status::OK();
  }
  // The device's boundary is the planner's own rule's: no entry of the run
  // but the last reaches the next multiple of the block size.
  const uint64_t nominal = b.key_bytes + b.value_bytes + 8 * n;
  const uint64_t last_nominal = uint64_t{b.last_key_size} + b.last_value_size + 8;
  if (prefix_next_ + (nominal - last_nominal) >= next_multiple_) {
    return Status::Corruption("gpu: plan: device block longer than the boundary rule's");
  }
  if (!splitter_.SkipCounted(b.last_grandparents, b.last_boundaries)) return Status::OK();
  TakeRun(b);
  *taken = true;
  return Status::OK();
}

void OutputPlanner::TakeRun(const BlockRun& b) {
  const uint64_t n = b.end - b.first - 1;
  const uint64_t nominal = b.key_bytes + b.value_bytes + 8 * n;
  const uint64_t last_nominal = uint64_t{b.last_key_size} + b.last_value_size + 8;
  block_.AddSizedRun(n, b.key_bytes, b.value_bytes, b.min_shared,
                     (b.flags & kRunKeysOfFirstSize) != 0, (b.flags & kRunValuesOfFirstSize) != 0);
  TableProperties& props = table_->props;
  if (table_->has_filter) table_->filter_keys += b.filter_keys;
  props.num_entries += n;
  props.num_deletions += b.deletions;
  props.raw_key_bytes += b.key_bytes;
  props.raw_value_bytes += b.value_bytes;
  props.smallest_seqno = std::min(props.smallest_seqno, b.smallest_seqno);
  props.largest_seqno = std::max(props.largest_seqno, b.largest_seqno);
  block_key_bytes_ += b.key_bytes;
  block_value_bytes_ += b.value_bytes;
  prefix_prev_ = prefix_next_ + (nominal - last_nominal);
  prefix_next_ += nominal;
  size_upper_ += b.growth + n * growth_fixed_;
  last_ = b.end - 1;
  last_key_size_ = b.last_key_size;
  last_key_offset_ = b.last_key_offset;
}

Status OutputPlanner::AddWholeBlock(const BlockRun& b, bool* taken) {
  *taken = false;
  if (table_ == nullptr || table_->props.num_entries == 0 || b.end <= b.first ||
      prefix_next_ < next_multiple_) {
    return Status::OK();  // Add would open a table, or not start a block at b.first
  }
  const PlanEntry& h = b.head;
  const uint64_t max_size = spec_.compaction->max_output_file_size();
  // Add's split-size decision before the head, by the bound it would use
  // (one it would compute anew when at the limit: left to it).
  EnsureSizeUpper();
  if (size_upper_ >= max_size) return Status::OK();
  const uint64_t n = b.end - b.first - 1;  // the run's entries
  const uint64_t head_nominal = uint64_t{h.key_size} + h.value_size + 8;
  const uint64_t upper_after_head = size_upper_ + MaxGrowth(h.key_size, h.value_size);
  // Add's block-size guard for the head alone (n == 0: the block is the
  // head), then AddBlockRun's tests over the whole block.
  const uint64_t key_bytes = uint64_t{h.key_size} + b.key_bytes;
  const uint64_t value_bytes = uint64_t{h.value_size} + b.value_bytes;
  if (BlockBuilder::SizeBound(key_bytes, value_bytes, n + 1) > BlockBuilder::kMaxBlockSize) {
    return Status::OK();
  }
  const uint64_t nominal = b.key_bytes + b.value_bytes + 8 * n;  // the run's
  const uint64_t last_nominal = uint64_t{b.last_key_size} + b.last_value_size + 8;
  const uint64_t bs = spec_.table_options.block_size;
  const uint64_t prefix_after_head = prefix_next_ + head_nominal;
  const uint64_t multiple_after_head = (prefix_next_ / bs + 1) * bs;
  if (n > 0) {
    const uint64_t last_growth = 4 * uint64_t{b.last_key_size} + b.last_value_size;
    if (upper_after_head + (b.growth - last_growth) + (n - 1) * growth_fixed_ >= max_size ||
        prefix_after_head + (nominal - last_nominal) >= multiple_after_head) {
      return Status::OK();
    }
  }
  // Every entry of b passed to the splitter with a size below the split
  // size: the state Add's calls (then AddBlockRun's) would leave, or none.
  if (n == 0 ? !splitter_.SkipCounted(h.grandparents, h.boundaries)
             : !splitter_.SkipCounted(b.last_grandparents, b.last_boundaries)) {
    return Status::OK();
  }
  // Add(b.first, h) from its block flush on, then the run (AddBlockRun).
  Status s = FlushBlock();
  if (!s.ok()) return s;
  AppendEntry(b.first, h);
  if (n > 0) TakeRun(b);
  *taken = true;
  return Status::OK();
}

Status OutputPlanner::Finish() {
  if (table_ != nullptr) {
    Status s = FinishTable();
    if (!s.ok()) return s;
  }

  return Status::OK();
}

uint64_t OutputPlanner::EstimatedFileSize(bool bound) {
  TableSizeState st;
  st.offset = offset_;
  if (block_.empty()) {
    st.index_block_size = table_->index.Size();
  } else {
    static const char kHandle[BlockHandle::kEncodedLength] = {};  // only its size matters
    const Slice handle(kHandle, sizeof(kHandle));
    if (bound) {
      // BlockBuilder::CurrentSizeBound of the open block, SizeBoundWith of the index.
      const uint64_t n = table_->index.NumEntries();
      st.index_block_size = BlockBuilder::SizeBound(table_->index_key_bytes + last_key_size_,
                                                    BlockHandle::kEncodedLength * (n + 1), n + 1);
      st.data_block_size =
          BlockBuilder::SizeBound(block_key_bytes_, block_value_bytes_, block_.NumEntries());
    } else {
      st.index_block_size = table_->index.SizeWith(LastKey(), handle);
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

uint64_t OutputPlanner::MaxGrowth(uint64_t key_size, uint64_t value_size) const {
  return 4 * key_size + value_size + growth_fixed_;
}

void OutputPlanner::StartTable() {
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

void OutputPlanner::ResetBlock() {
  block_.Reset();
  block_key_bytes_ = 0;
  block_value_bytes_ = 0;
}

Status OutputPlanner::FlushBlock() {
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
  // The index entry: the device writes it (tail_common.h); the plan keeps
  // its layout (the key's common prefix with the table's first index key
  // is read here) and the running sum of the index keys' bytes.
  static const char kHandle[BlockHandle::kEncodedLength] = {};  // only its size matters
  table_->index.Add(LastKey(), Slice(kHandle, sizeof(kHandle)));
  table_->index_key_bytes += last_key_size_;
  if (table_->index_key_bytes > 0xffffffffu) {
    return Status::NotSupported("gpu: encode: index keys of a table over 4 GiB");
  }
  blocks_->back().index_key_end = static_cast<uint32_t>(table_->index_key_bytes);
  ResetBlock();
  return Status::OK();
}

Slice OutputPlanner::LastKey() const {
  return Slice(key_arena_ + last_key_offset_, last_key_size_);
}

uint64_t OutputPlanner::FilterContentsSize(uint64_t num_keys) const {
  return BloomFilterSize(BloomNumLines(num_keys, spec_.table_options.bloom_bits_per_key));
}

Status OutputPlanner::FinishTable() {
  Status s = FlushBlock();
  if (!s.ok()) return s;
  const Slice largest = LastKey();
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
  // The tail the device writes: properties, index, footer.
  const BlockLayout index = table_->index.Layout();
  if (index.size > BlockBuilder::kMaxBlockSize) {
    return Status::NotSupported("gpu: encode: index block over 4 GiB");
  }
  const TableProperties& p = table_->props;
  EncodeTable t{};
  t.out_offset = table_->out_offset;
  t.first_block = table_->first_block;
  t.end_block = table_->end_block;
  t.data_bytes = table_->data_bytes;
  t.filter_size = table_->filter_bytes > 0 ? table_->filter_bytes - kBlockTrailerSize : 0;
  SetTailLayout(p, index, &t);
  // The file's size is TableBuilder's: every part as it lays them out.
  table_->file_size = TableFileSize(t);
  if (EncodedBlockSize(IndexLayout(t)) != index.size ||
      EncodedBlockSize(PropertiesLayout(t)) !=
          PropertiesBlockSize(t.comparator_size, t.smallest_key_size, t.largest_key_size)) {
    return Status::Corruption("gpu: encode: planned table tail differs from its layout");
  }
  encode_tables_->push_back(t);
  out_cursor_ += table_->file_size;
  table_ = nullptr;
  size_upper_valid_ = false;
  return Status::OK();
}

uint64_t OutputPlanner::AlignTable(uint64_t offset) const {
  if (!spec_.table_options.use_direct_writes) return offset;
  return AlignUp(offset, kTableAlignment);
}

}  // namespace gpu
}  // namespace accelkv
