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

class TableDecoder {
 public:
  TableDecoder(const CompactionJobSpec& spec, const uint8_t* arena, const InputTable& t,
               JobInput* input)
      : spec_(spec),
        base_(reinterpret_cast<const char*>(arena + t.offset)),
        table_(t),
        input_(input) {}

  Status Decode() {
    const uint64_t size = table_.size;
    if (size < Footer::kEncodedLength) return Corrupt("table file too short");
    Footer footer;
    Status s = footer.DecodeFrom(
        Slice(base_ + size - Footer::kEncodedLength, Footer::kEncodedLength), size);
    if (!s.ok()) return Corrupt(s);
    s = CheckBlockOnCpu(base_, footer.index_handle);
    if (!s.ok()) return Corrupt(s);
    const Slice index(base_ + footer.index_handle.offset, footer.index_handle.size);
    s = Block::Validate(index);
    if (!s.ok()) return Corrupt(s);
    const uint64_t data_end = footer.filter_handle.size != 0 ? footer.filter_handle.offset
                                                             : footer.properties_handle.offset;
    auto contents = std::make_unique<char[]>(index.size());
    std::memcpy(contents.get(), index.data(), index.size());
    BlockContents bc;
    bc.data = std::move(contents);
    bc.size = index.size();
    std::unique_ptr<Block> index_block;
    s = Block::Parse(std::move(bc), &index_block);
    if (!s.ok()) return Corrupt(s);
    for (uint32_t i = 0; i < index_block->num_entries(); ++i) {
      Slice v = index_block->value(i);
      BlockHandle h;
      if (v.size() != BlockHandle::kEncodedLength) return Corrupt("bad index entry");
      s = h.DecodeFrom(&v);
      if (!s.ok()) return Corrupt(s);
      if (h.offset > data_end || h.size > data_end - h.offset ||
          data_end - h.offset - h.size < kBlockTrailerSize) {
        return Corrupt("index entry points outside the data blocks");
      }
      s = DecodeDataBlock(h);
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

  Status DecodeDataBlock(const BlockHandle& h) {
    if (base_[h.offset + h.size] != 0) return Corrupt("unsupported compression");
    const char* data = base_ + h.offset;
    Status s = Block::Validate(Slice(data, h.size));
    if (!s.ok()) return Corrupt(s);
    AddSpan(h);
    const uint32_t n = DecodeFixed32(data + h.size - 4);
    const char* key_offsets = data + h.size - 4 - 8 * (uint64_t{n} + 1);
    const char* value_offsets = key_offsets + 4 * (uint64_t{n} + 1);
    KeySortInput& keys = input_->keys;
    const uint64_t block_base = table_.offset + h.offset;
    for (uint32_t j = 0; j < n; ++j) {
      const uint32_t kb = DecodeFixed32(key_offsets + 4 * j);
      const uint32_t ke = DecodeFixed32(key_offsets + 4 * (j + 1));
      const uint32_t vb = DecodeFixed32(value_offsets + 4 * j);
      const uint32_t ve = DecodeFixed32(value_offsets + 4 * (j + 1));
      ParsedInternalKey parsed;
      if (!ParseInternalKey(Slice(data + kb, ke - kb), &parsed)) {
        return Corrupt("malformed internal key");
      }
      if (keys.key_offset.size() >= std::numeric_limits<uint32_t>::max()) {
        return Status::NotSupported("gpu: job has 2^32 or more entries");
      }
      keys.key_offset.push_back(block_base + kb);
      keys.key_size.push_back(ke - kb);
      input_->value_offset.push_back(block_base + vb);
      input_->value_size.push_back(ve - vb);
      uint8_t flags = 0;
      if (parsed.type == ValueType::kDeletion &&
          spec_.compaction->IsBaseLevelForKey(parsed.user_key)) {
        flags |= kFlagBaseLevel;
      }
      keys.flags.push_back(flags);
    }
    return Status::OK();
  }

  const CompactionJobSpec& spec_;
  const char* const base_;
  const InputTable& table_;
  JobInput* const input_;
};

}  // namespace

const InputTable& JobInput::TableAt(uint64_t offset) const {
  auto it = std::upper_bound(tables.begin(), tables.end(), offset,
                             [](uint64_t o, const InputTable& t) { return o < t.offset; });
  return *(it - 1);
}

void JobInput::Clear() {
  tables.clear();
  keys.arena = nullptr;
  keys.arena_size = 0;
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

Status DecodeInputTables(const CompactionJobSpec& spec, JobInput* input) {
  input->keys.snapshots.assign(spec.snapshots.begin(), spec.snapshots.end());
  // The files' entry counts size the per-entry arrays up front (no regrowth).
  uint64_t entries = 0;
  for (int which = 0; which < 2; ++which) {
    for (const FileMetaPtr& f : spec.compaction->inputs(which)) entries += f->num_entries;
  }
  input->keys.key_offset.reserve(entries);
  input->keys.key_size.reserve(entries);
  input->keys.flags.reserve(entries);
  input->value_offset.reserve(entries);
  input->value_size.reserve(entries);
  for (const InputTable& t : input->tables) {
    TableDecoder decoder(spec, input->keys.arena, t, input);
    Status s = decoder.Decode();
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace gpu
}  // namespace accelkv
