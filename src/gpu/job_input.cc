#include "gpu/job_input.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "table/block.h"
#include "table/format.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/filename.h"
#include "util/internal_key.h"

namespace accelkv {
namespace gpu {

namespace {

constexpr uint64_t kReadChunk = 8ull << 20;

std::string TableError(uint64_t number, const char* what) {
  return "table file " + std::to_string(number) + ": " + what;
}

// Reads the whole file into dst (exactly size bytes).
Status ReadWholeFile(Env* env, const std::string& fname, uint64_t size, uint8_t* dst) {
  std::unique_ptr<RandomAccessFile> file;
  Status s = env->NewRandomAccessFile(fname, &file);
  if (!s.ok()) return s;
  uint64_t done = 0;
  while (done < size) {
    const size_t n = static_cast<size_t>(std::min(kReadChunk, size - done));
    char* scratch = reinterpret_cast<char*>(dst + done);
    Slice got;
    s = file->Read(done, n, &got, scratch);
    if (!s.ok()) return s;
    if (got.empty()) return Status::Corruption("truncated table file", fname);
    if (got.data() != scratch) std::memmove(scratch, got.data(), got.size());
    done += std::min<uint64_t>(got.size(), n);
  }
  return Status::OK();
}

// Checks a block's trailer on the CPU (for the index block, which the CPU
// needs before anything can be sent to the device).
Status CheckBlockOnCpu(const char* base, const BlockHandle& h) {
  const size_t n = static_cast<size_t>(h.size);
  const uint32_t expected = crc32c::Unmask(DecodeFixed32(base + h.offset + n + 1));
  if (crc32c::Value(base + h.offset, n + 1) != expected) {
    return Status::Corruption("block checksum mismatch");
  }
  if (base[h.offset + n] != 0) return Status::Corruption("unsupported compression");
  return Status::OK();
}

// The entries of a validated block, read in place by its layout.
class BlockEntries {
 public:
  BlockEntries(const char* data, const BlockLayout& layout) : data_(data), l_(layout) {}

  Slice prefix() const { return Slice(data_, l_.prefix_size); }
  // REQUIRES: i < l_.n (here and in value_offset()).
  Slice suffix(uint32_t i) const {
    uint64_t b, e;
    Bounds(l_.key_width, data_ + l_.key_ends_offset(), i, &b, &e);
    return Slice(data_ + l_.keys_offset() + b, e - b);
  }
  // The offset of value i from the block's start, and its size.
  uint64_t value_offset(uint32_t i, uint64_t* size) const {
    uint64_t b, e;
    Bounds(l_.value_width, data_ + l_.value_ends_offset(), i, &b, &e);
    *size = e - b;
    return l_.values_offset() + b;
  }

 private:
  uint64_t End(const char* ends, uint64_t i) const {
    const auto* p = reinterpret_cast<const uint8_t*>(ends + i * l_.offset_width);
    if (l_.offset_width == 2) return uint64_t{p[0]} | (uint64_t{p[1]} << 8);
    return DecodeFixed32(ends + i * 4);
  }
  // [*b, *e) of entry i in a section of this width (or its end offsets).
  void Bounds(uint32_t width, const char* ends, uint32_t i, uint64_t* b, uint64_t* e) const {
    if (width != BlockLayout::kVariable) {
      *b = uint64_t{i} * width;
      *e = *b + width;
    } else {
      *b = i == 0 ? 0 : End(ends, i - 1);
      *e = End(ends, i);
    }
  }

  const char* const data_;
  const BlockLayout& l_;
};

// Finds and validates a table's blocks: the index block (CRC checked here),
// every data block's layout (into input->data_blocks) and the spans the
// device checksums (data, filter, properties).
class TableDecoder {
 public:
  TableDecoder(const uint8_t* arena, const InputTable& t, JobInput* input)
      : base_(reinterpret_cast<const char*>(arena + t.offset)), table_(t), input_(input) {}

  Status Decode() {
    const uint64_t size = table_.size;
    if (size < Footer::kEncodedLength) return Corrupt("table file too short");
    Footer footer;
    Status s = footer.DecodeFrom(
        Slice(base_ + size - Footer::kEncodedLength, Footer::kEncodedLength), size);
    if (!s.ok()) return Corrupt(s);
    s = CheckBlockOnCpu(base_, footer.index_handle);
    if (!s.ok()) return Corrupt(s);
    BlockLayout layout;
    const char* index = base_ + footer.index_handle.offset;
    s = Block::Validate(Slice(index, footer.index_handle.size), &layout);
    if (!s.ok()) return Corrupt(s);
    const uint64_t data_end = footer.filter_handle.size != 0 ? footer.filter_handle.offset
                                                             : footer.properties_handle.offset;
    const BlockEntries entries(index, layout);
    for (uint32_t i = 0; i < layout.n; ++i) {
      uint64_t value_size;
      const uint64_t value_offset = entries.value_offset(i, &value_size);
      if (value_size != BlockHandle::kEncodedLength) return Corrupt("bad index entry");
      Slice v(index + value_offset, value_size);
      BlockHandle h;
      s = h.DecodeFrom(&v);
      if (!s.ok()) return Corrupt(s);
      if (h.offset > data_end || h.size > data_end - h.offset ||
          data_end - h.offset - h.size < kBlockTrailerSize) {
        return Corrupt("index entry points outside the data blocks");
      }
      s = AddDataBlock(h);
      if (!s.ok()) return s;
    }
    if (footer.filter_handle.size != 0) AddSpan(footer.filter_handle);
    AddSpan(footer.properties_handle);
    return Status::OK();
  }

 private:
  Status Corrupt(const char* what) const {
    return Status::Corruption(TableError(table_.number, what));
  }
  Status Corrupt(const Status& s) const {
    return Status::Corruption(TableError(table_.number, s.ToString().c_str()));
  }

  void AddSpan(const BlockHandle& h) {
    input_->keys.blocks.push_back(BlockSpan{table_.offset + h.offset, h.size});
  }

  Status AddDataBlock(const BlockHandle& h) {
    if (base_[h.offset + h.size] != 0) return Corrupt("unsupported compression");
    InputDataBlock block;
    block.offset = table_.offset + h.offset;
    block.table = table_.number;
    Status s = Block::Validate(Slice(base_ + h.offset, h.size), &block.layout);
    if (!s.ok()) return Corrupt(s);
    // Keys of a block are distinct and share the prefix, so at most one
    // suffix is empty: this bounds the key arena by the file bytes' square.
    if (block.layout.n > block.layout.key_bytes + 1) {
      return Corrupt("data block has more entries than distinct keys");
    }
    AddSpan(h);
    input_->data_blocks.push_back(block);
    return Status::OK();
  }

  const char* const base_;
  const InputTable& table_;
  JobInput* const input_;
};

// Materializes the keys of one data block at key_arena + *cursor and
// appends its entries.
Status DecodeEntries(const CompactionJobSpec& spec, const InputDataBlock& block, uint8_t* key_arena,
                     uint64_t* cursor, JobInput* input) {
  const char* data = reinterpret_cast<const char*>(input->keys.arena + block.offset);
  const BlockEntries entries(data, block.layout);
  const Slice prefix = entries.prefix();
  KeySortInput& keys = input->keys;
  for (uint32_t j = 0; j < block.layout.n; ++j) {
    const Slice suffix = entries.suffix(j);
    char* key = reinterpret_cast<char*>(key_arena + *cursor);
    std::memcpy(key, prefix.data(), prefix.size());
    std::memcpy(key + prefix.size(), suffix.data(), suffix.size());
    const Slice ikey(key, prefix.size() + suffix.size());
    ParsedInternalKey parsed;
    if (ikey.size() > std::numeric_limits<uint32_t>::max() || !ParseInternalKey(ikey, &parsed)) {
      return Status::Corruption(TableError(block.table, "malformed internal key"));
    }
    uint64_t value_size;
    const uint64_t value_offset = entries.value_offset(j, &value_size);
    keys.key_offset.push_back(*cursor);
    keys.key_size.push_back(static_cast<uint32_t>(ikey.size()));
    *cursor += ikey.size();
    input->value_offset.push_back(block.offset + value_offset);
    input->value_size.push_back(static_cast<uint32_t>(value_size));
    uint8_t flags = 0;
    if (parsed.type == ValueType::kDeletion &&
        spec.compaction->IsBaseLevelForKey(parsed.user_key)) {
      flags |= kFlagBaseLevel;
    }
    keys.flags.push_back(flags);
  }
  return Status::OK();
}

}  // namespace

const InputTable& JobInput::TableAt(uint64_t offset) const {
  auto it = std::upper_bound(tables.begin(), tables.end(), offset,
                             [](uint64_t o, const InputTable& t) { return o < t.offset; });
  return *(it - 1);
}

void JobInput::Clear() {
  tables.clear();
  data_blocks.clear();
  keys.arena = nullptr;
  keys.arena_size = 0;
  keys.key_arena = nullptr;
  keys.key_arena_size = 0;
  keys.keep_for_encode = false;
  keys.blocks.clear();
  keys.key_offset.clear();
  keys.key_size.clear();
  keys.flags.clear();
  keys.snapshots.clear();
  value_offset.clear();
  value_size.clear();
}

Status ReadInputTables(const CompactionJobSpec& spec, KeySortDevice* device, JobInput* input) {
  const Compaction* c = spec.compaction;
  uint64_t total = 0;
  for (int which = 0; which < 2; ++which) {
    for (const FileMetaPtr& f : c->inputs(which)) {
      input->tables.push_back(InputTable{f->number, total, f->file_size});
      total += f->file_size;
    }
  }
  uint8_t* arena = nullptr;
  Status s = device->HostArena(std::max<uint64_t>(total, 1), &arena);
  if (!s.ok()) return s;
  input->keys.arena = arena;
  input->keys.arena_size = total;
  for (const InputTable& t : input->tables) {
    s = ReadWholeFile(spec.env, TableFileName(spec.dbname, t.number), t.size, arena + t.offset);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status DecodeInputTables(const CompactionJobSpec& spec, KeySortDevice* device, JobInput* input) {
  KeySortInput& keys = input->keys;
  keys.snapshots.assign(spec.snapshots.begin(), spec.snapshots.end());
  for (const InputTable& t : input->tables) {
    TableDecoder decoder(keys.arena, t, input);
    Status s = decoder.Decode();
    if (!s.ok()) return s;
  }
  uint64_t entries = 0;
  uint64_t key_bytes = 0;
  for (const InputDataBlock& b : input->data_blocks) {
    entries += b.layout.n;
    key_bytes += uint64_t{b.layout.n} * b.layout.prefix_size + b.layout.key_bytes;
  }
  if (entries >= std::numeric_limits<uint32_t>::max()) {
    return Status::NotSupported("gpu: job has 2^32 or more entries");
  }
  const uint64_t needed =
      KeySortDevice::BytesNeeded(keys.arena_size, key_bytes, entries, keys.blocks.size());
  if (needed > device->MemoryBudget()) {
    return Status::Aborted("gpu: alloc: job needs more device memory than the budget",
                           std::to_string(needed) + " > " + std::to_string(device->MemoryBudget()));
  }
  uint8_t* key_arena = nullptr;
  Status s = device->HostKeyArena(std::max<uint64_t>(key_bytes, 1), &key_arena);
  if (!s.ok()) return s;
  keys.key_arena = key_arena;
  keys.key_arena_size = key_bytes;
  keys.key_offset.reserve(entries);
  keys.key_size.reserve(entries);
  keys.flags.reserve(entries);
  input->value_offset.reserve(entries);
  input->value_size.reserve(entries);
  uint64_t cursor = 0;
  for (const InputDataBlock& b : input->data_blocks) {
    s = DecodeEntries(spec, b, key_arena, &cursor, input);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace gpu
}  // namespace accelkv
