#include "table/table_builder.h"

#include <algorithm>
#include <cassert>

#include "table/block_builder.h"
#include "table/filter.h"
#include "table/format.h"
#include "table/properties_block.h"
#include "util/internal_key.h"

namespace accelkv {

struct TableBuilder::Rep {
  Rep(const TableOptions& opt, WritableFile* f) : options(opt), file(f) {}

  const TableOptions options;
  WritableFile* const file;
  uint64_t offset = 0;
  Status status;
  BlockBuilder data_block;
  BlockBuilder index_block;
  std::unique_ptr<FilterBuilder> filter;
  std::string last_key;
  uint64_t prefix_prev = 0;  // P_{i-1}: prefix sum before the last added entry
  uint64_t prefix_next = 0;  // P_i: prefix sum before the next entry
  TableProperties props;
  std::string trailer;  // scratch for block trailers
  bool closed = false;  // Finish() or Abandon() called

  void WriteRawBlock(const Slice& contents, BlockHandle* handle);
  void FlushDataBlock();
};

void TableBuilder::Rep::WriteRawBlock(const Slice& contents, BlockHandle* handle) {
  handle->offset = offset;
  handle->size = contents.size();
  if (!status.ok()) return;
  trailer.clear();
  AppendBlockTrailer(contents, &trailer);
  status = file->Append(contents);
  if (status.ok()) status = file->Append(trailer);
  if (status.ok()) offset += contents.size() + kBlockTrailerSize;
}

void TableBuilder::Rep::FlushDataBlock() {
  if (data_block.empty()) return;
  BlockHandle handle;
  WriteRawBlock(data_block.Finish(), &handle);
  data_block.Reset();
  if (!status.ok()) return;
  props.num_data_blocks++;
  props.data_bytes += handle.size + kBlockTrailerSize;
  char encoded[BlockHandle::kEncodedLength];
  handle.EncodeTo(encoded);
  index_block.Add(last_key, Slice(encoded, sizeof(encoded)));
}

TableBuilder::TableBuilder(const TableOptions& options, WritableFile* file)
    : rep_(std::make_unique<Rep>(options, file)) {
  assert(options.comparator != nullptr);
  if (options.block_size == 0) {
    rep_->status = Status::InvalidArgument("table block_size must be positive");
  }
  if (options.compression != CompressionType::kNone) {
    rep_->status = Status::NotSupported("table compression");
  }
  if (options.bloom_bits_per_key > 0) {
    rep_->filter = std::make_unique<FilterBuilder>(options.bloom_bits_per_key);
  }
  const Comparator* named =
      options.user_comparator != nullptr ? options.user_comparator : options.comparator;
  rep_->props.comparator_name = named->Name();
}

TableBuilder::~TableBuilder() { assert(rep_->closed); }

void TableBuilder::Add(const Slice& key, const Slice& value) {
  Rep* r = rep_.get();
  assert(!r->closed);
  if (!r->status.ok()) return;
  ParsedInternalKey parsed;
  if (key.size() < kInternalKeyTrailerSize) {
    r->status = Status::InvalidArgument("table key is not an internal key");
    return;
  }
  ParseInternalKey(key, &parsed);
  const uint64_t entry_size = key.size() + value.size() + 8;
  if (r->props.num_entries > 0) {
    assert(r->options.comparator->Compare(r->last_key, key) < 0);
    // Data block boundary rule: entry i starts a block iff
    // floor(P_i / block_size) != floor(P_{i-1} / block_size).
    const uint64_t bs = r->options.block_size;
    if (r->prefix_next / bs != r->prefix_prev / bs) r->FlushDataBlock();
    if (!r->status.ok()) return;
  } else {
    r->props.smallest_key.assign(key.data(), key.size());
    r->props.smallest_seqno = parsed.sequence;
    r->props.largest_seqno = parsed.sequence;
  }
  // The exact size is needed only when the cheap bound exceeds the limit.
  if (r->data_block.SizeBoundWith(key, value) > BlockBuilder::kMaxBlockSize &&
      r->data_block.SizeWith(key, value) > BlockBuilder::kMaxBlockSize) {
    r->status = Status::InvalidArgument("table entry too large for a block");
    return;
  }
  r->prefix_prev = r->prefix_next;
  r->prefix_next += entry_size;
  r->data_block.Add(key, value);
  r->last_key.assign(key.data(), key.size());
  if (r->filter != nullptr) r->filter->AddKey(parsed.user_key);

  TableProperties& p = r->props;
  p.num_entries++;
  if (parsed.type == ValueType::kDeletion) p.num_deletions++;
  p.raw_key_bytes += key.size();
  p.raw_value_bytes += value.size();
  p.smallest_seqno = std::min(p.smallest_seqno, parsed.sequence);
  p.largest_seqno = std::max(p.largest_seqno, parsed.sequence);
}

Status TableBuilder::Finish() {
  Rep* r = rep_.get();
  assert(!r->closed);
  r->closed = true;
  r->FlushDataBlock();
  if (!r->status.ok()) return r->status;
  r->props.largest_key = r->last_key;

  Footer footer;
  if (r->filter != nullptr && r->props.num_entries > 0) {
    std::string contents;
    r->filter->Finish(&contents);
    r->WriteRawBlock(contents, &footer.filter_handle);
  }
  std::string props;
  EncodePropertiesBlock(r->props, &props);
  r->WriteRawBlock(props, &footer.properties_handle);
  r->WriteRawBlock(r->index_block.Finish(), &footer.index_handle);
  if (!r->status.ok()) return r->status;
  std::string encoded;
  footer.EncodeTo(&encoded);
  r->status = r->file->Append(encoded);
  if (r->status.ok()) r->offset += encoded.size();
  return r->status;
}

void TableBuilder::Abandon() {
  assert(!rep_->closed);
  rep_->closed = true;
}

Status TableBuilder::status() const { return rep_->status; }
uint64_t TableBuilder::NumEntries() const { return rep_->props.num_entries; }
uint64_t TableBuilder::FileSize() const { return rep_->offset; }

uint64_t TableSizeFixedPart(uint64_t comparator_name_size, uint64_t smallest_key_size,
                            uint64_t last_key_size) {
  return kBlockTrailerSize +  // the index block's; its contents are in the variable part
         PropertiesBlockSize(comparator_name_size, smallest_key_size, last_key_size) +
         kBlockTrailerSize + Footer::kEncodedLength;
}

uint64_t EstimateTableFileSize(const TableSizeState& st) {
  static_assert(kBlockTrailerSize == 5);  // TableSizeVariablePart's
  return TableSizeFixedPart(st.comparator_name_size, st.smallest_key_size, st.last_key_size) +
         TableSizeVariablePart(st);
}

TableSizeState TableBuilder::SizeState(bool bound) const {
  const Rep* r = rep_.get();
  TableSizeState st;
  st.offset = r->offset;
  if (r->data_block.empty()) {
    st.index_block_size = r->index_block.CurrentSizeEstimate();
  } else {
    static const char kHandle[BlockHandle::kEncodedLength] = {};  // only its size matters
    const Slice handle(kHandle, sizeof(kHandle));
    st.index_block_size = bound ? r->index_block.SizeBoundWith(r->last_key, handle)
                                : r->index_block.SizeWith(r->last_key, handle);
    st.data_block_size =
        bound ? r->data_block.CurrentSizeBound() : r->data_block.CurrentSizeEstimate();
  }
  st.last_key_size = r->last_key.size();
  if (r->filter != nullptr && r->props.num_entries > 0) {
    st.filter_encoded_size = r->filter->EncodedSize();
  }
  st.comparator_name_size = r->props.comparator_name.size();
  st.smallest_key_size = r->props.smallest_key.size();
  return st;
}

uint64_t TableBuilder::EstimatedFileSize() const { return EstimateTableFileSize(SizeState(false)); }

uint64_t TableBuilder::EstimatedFileSizeBound() const {
  return EstimateTableFileSize(SizeState(true));
}

const TableProperties& TableBuilder::properties() const { return rep_->props; }

Status NewTableFile(Env* env, const std::string& fname, const TableOptions& options,
                    IOPriority priority, std::unique_ptr<WritableFile>* file) {
  WritableFileOptions file_options;
  file_options.use_direct_writes = options.use_direct_writes;
  file_options.io_priority = priority;
  return env->NewWritableFile(fname, file_options, file);
}

}  // namespace accelkv
