#include "table/table.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "table/block.h"
#include "table/filter.h"
#include "table/format.h"
#include "table/properties_block.h"
#include "table/two_level_iterator.h"
#include "util/coding.h"
#include "util/internal_key.h"

namespace accelkv {

namespace {

constexpr size_t kCacheKeySize = 16;  // fixed64 cache id ++ fixed64 block offset

void DeleteCachedBlock(const Slice& /*key*/, void* value) { delete static_cast<Block*>(value); }

// The first 8 bytes of a user key as a big-endian integer, zero-padded. For
// the bytewise order, KeyPrefix(a) < KeyPrefix(b) implies a < b (a shorter
// key pads with the smallest byte); equal prefixes decide nothing.
uint64_t KeyPrefix(const Slice& user_key) {
  uint64_t p = 0;
  const size_t n = std::min<size_t>(user_key.size(), 8);
  for (size_t i = 0; i < n; ++i) {
    p |= uint64_t{static_cast<unsigned char>(user_key[i])} << (56 - 8 * i);
  }
  return p;
}

// The index keys' user keys, minus the prefix they all share, cut to their
// first 8 bytes (KeyPrefix) and kept in one array. Looking a key's data
// block up in it is a binary search over 8-byte integers (about 8 bytes per
// 4 KiB data block) whose first levels stay in the CPU caches, instead of
// one over the index block, where each probe misses twice (offset, then
// key). Keys with equal prefixes are compared in full. Only for a bytewise
// user comparator, where the prefixes are sorted.
class PrefixIndex {
 public:
  // Unusable (usable() false) unless every index key is an internal key.
  explicit PrefixIndex(const Block& index) {
    const uint32_t n = index.num_entries();
    std::string scratch;
    for (uint32_t i = 0; i < n; ++i) {
      if (index.key(i, &scratch).size() < kInternalKeyTrailerSize) return;
    }
    if (n > 0) {
      // Copied: key(i) may be materialized, valid only until the next call.
      const std::string first = ExtractUserKey(index.key(0, &scratch)).ToString();
      const Slice last = ExtractUserKey(index.key(n - 1, &scratch));
      shared_ = first.substr(
          0, CommonPrefixLength(first.data(), last.data(), std::min(first.size(), last.size())));
    }
    prefixes_.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      Slice user_key = ExtractUserKey(index.key(i, &scratch));
      user_key.remove_prefix(shared_.size());
      prefixes_[i] = KeyPrefix(user_key);
    }
    usable_ = true;
  }

  bool usable() const { return usable_; }

  // index.LowerBound(cmp, ikey) for an internal key: keys outside the shared
  // prefix are before or after every entry; entries with a smaller prefix
  // are before ikey, those with a larger one after it.
  uint32_t LowerBound(const Block& index, const Comparator* cmp, const Slice& ikey) const {
    Slice user_key = ExtractUserKey(ikey);
    const int c =
        std::memcmp(user_key.data(), shared_.data(), std::min(user_key.size(), shared_.size()));
    if (c < 0 || (c == 0 && user_key.size() < shared_.size())) return 0;
    if (c > 0) return static_cast<uint32_t>(prefixes_.size());
    user_key.remove_prefix(shared_.size());
    const auto [first, last] =
        std::equal_range(prefixes_.begin(), prefixes_.end(), KeyPrefix(user_key));
    // Entries with ikey's prefix are compared in full.
    return index.LowerBound(cmp, ikey, static_cast<uint32_t>(first - prefixes_.begin()),
                            static_cast<uint32_t>(last - prefixes_.begin()));
  }

 private:
  std::string shared_;  // the prefix of every index key's user key
  std::vector<uint64_t> prefixes_;
  bool usable_ = false;
};

}  // namespace

struct Table::Rep {
  TableOptions options;
  std::unique_ptr<RandomAccessFile> file;
  uint64_t file_size = 0;
  uint64_t cache_id = 0;
  Footer footer;
  uint64_t data_end = 0;  // first byte after the last data block's trailer
  // The file returned its own memory for the footer (an mmap'd file): its
  // blocks borrow that memory, so `file` must outlive every block and
  // iterator of this table (declared before them, so destroyed after them).
  bool file_in_memory = false;
  // With file_in_memory: bit i is set once data block i (index entry i) has
  // been read with its checksum verified by a read that fills the cache.
  // Such a read of a file that is not in memory would have put the block
  // in the block cache, verified, and later reads would find it there
  // unverified; a mapped block stays where it is, so this bit stands in for
  // the cache entry: later reads skip the CRC (profiled: 26% of a
  // seekrandom's samples over three mapped L0 tables, each seek reading and
  // verifying a 4 KiB block per table). Only reads that verify checksums and
  // fill the cache use and set it; the others (compaction inputs, which do
  // not fill the cache; reads without verify_checksums) behave as before.
  std::unique_ptr<std::atomic<uint64_t>[]> verified_blocks;
  std::unique_ptr<Block> index_block;
  std::unique_ptr<PrefixIndex> prefix_index;  // nullptr: search index_block
  BlockContents filter_contents;
  std::unique_ptr<FilterReader> filter;  // nullptr: no filter
  TableProperties props;

  // The first index entry with key >= ikey (REQUIRES: ikey is an internal key).
  uint32_t IndexLowerBound(const Slice& ikey) const {
    if (prefix_index != nullptr && ikey.size() >= kInternalKeyTrailerSize) {
      return prefix_index->LowerBound(*index_block, options.comparator, ikey);
    }
    return index_block->LowerBound(options.comparator, ikey);
  }

  // Decodes a data block handle from an index value.
  Status DecodeDataHandle(const Slice& index_value, BlockHandle* handle) const {
    Slice in = index_value;
    if (in.size() != BlockHandle::kEncodedLength) return Status::Corruption("bad index entry");
    Status s = handle->DecodeFrom(&in);
    if (!s.ok()) return s;
    if (handle->offset > data_end || handle->size > data_end - handle->offset ||
        data_end - handle->offset - handle->size < kBlockTrailerSize) {
      return Status::Corruption("index entry points outside the data blocks");
    }
    return Status::OK();
  }

  // Sets *block to the data block at handle: pinned in the block cache
  // (*cache_handle set; the caller releases it) or owned by *owned. Blocks of
  // a file that returns its own memory (mmap) borrow that memory and bypass
  // the block cache, as in LevelDB: the page cache already holds them, and a
  // cached block must not outlive the file it points into.
  static constexpr uint32_t kNoOrdinal = ~uint32_t{0};

  // ordinal: the block's index entry, or kNoOrdinal if not known.
  Status GetBlock(const ReadOptions& ro, const BlockHandle& handle, uint32_t ordinal,
                  const Block** block, Cache::Handle** cache_handle,
                  std::unique_ptr<Block>* owned) const {
    *cache_handle = nullptr;
    Cache* cache = file_in_memory ? nullptr : options.block_cache;
    char key[kCacheKeySize];
    if (cache != nullptr) {
      EncodeFixed64(key, cache_id);
      EncodeFixed64(key + 8, handle.offset);
      Cache::Handle* h = cache->Lookup(Slice(key, kCacheKeySize));
      if (h != nullptr) {
        *cache_handle = h;
        *block = static_cast<const Block*>(cache->Value(h));
        return Status::OK();
      }
    }
    const bool insert = cache != nullptr && ro.fill_cache;
    ReadBlockOptions rbo;
    // A block entering the cache is always verified (ReadOptions::verify_checksums).
    rbo.verify_checksum = ro.verify_checksums || insert;
    // A mapped block verified before counts as cached (verified_blocks).
    std::atomic<uint64_t>* verified_word = nullptr;
    uint64_t verified_bit = 0;
    if (verified_blocks != nullptr && ro.verify_checksums && ro.fill_cache &&
        ordinal < index_block->num_entries()) {
      verified_word = &verified_blocks[ordinal / 64];
      verified_bit = uint64_t{1} << (ordinal % 64);
      if ((verified_word->load(std::memory_order_relaxed) & verified_bit) != 0) {
        rbo.verify_checksum = false;
        verified_word = nullptr;  // nothing to record
      }
    }
    rbo.file_returns_own_memory = file_in_memory;
    BlockContents contents;
    Status s = ReadBlock(*file, handle, &contents, rbo);
    if (!s.ok()) return s;
    if (verified_word != nullptr) verified_word->fetch_or(verified_bit, std::memory_order_relaxed);
    const bool borrowed = !contents.owned();
    std::unique_ptr<Block> parsed;
    s = Block::Parse(std::move(contents), &parsed);
    if (!s.ok()) return s;
    if (insert && !borrowed) {
      const size_t charge = parsed->size();
      Block* raw = parsed.release();
      *cache_handle = cache->Insert(Slice(key, kCacheKeySize), raw, charge, &DeleteCachedBlock);
      *block = raw;
    } else {
      *block = parsed.get();
      *owned = std::move(parsed);
    }
    return Status::OK();
  }
};

Table::Table(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
Table::~Table() = default;

namespace {

// Reads, verifies and parses the block at handle (index, properties, and
// data blocks for VerifyAllBlocks).
Status ReadAndParseBlock(const RandomAccessFile& file, bool file_in_memory,
                         const BlockHandle& handle, std::unique_ptr<Block>* block) {
  ReadBlockOptions rbo;
  rbo.file_returns_own_memory = file_in_memory;
  BlockContents contents;
  Status s = ReadBlock(file, handle, &contents, rbo);
  if (s.ok()) s = Block::Parse(std::move(contents), block);
  return s;
}

}  // namespace

Status Table::Open(const TableOptions& options, std::unique_ptr<RandomAccessFile> file,
                   uint64_t file_size, std::unique_ptr<Table>* table) {
  table->reset();
  auto rep = std::make_unique<Rep>();
  Status s = ReadFooter(*file, file_size, &rep->footer, &rep->file_in_memory);
  if (!s.ok()) return s;
  rep->options = options;
  rep->file_size = file_size;
  rep->data_end = rep->footer.DataEnd();

  s = ReadAndParseBlock(*file, rep->file_in_memory, rep->footer.index_handle, &rep->index_block);
  if (!s.ok()) return s;
  if (options.user_comparator == BytewiseComparator()) {
    rep->prefix_index = std::make_unique<PrefixIndex>(*rep->index_block);
    if (!rep->prefix_index->usable()) rep->prefix_index.reset();
  }
  std::unique_ptr<Block> props_block;
  s = ReadAndParseBlock(*file, rep->file_in_memory, rep->footer.properties_handle, &props_block);
  if (!s.ok()) return s;
  s = DecodePropertiesBlock(*props_block, &rep->props);
  if (!s.ok()) return s;
  if (rep->footer.filter_handle.size != 0) {
    ReadBlockOptions rbo;
    rbo.file_returns_own_memory = rep->file_in_memory;
    s = ReadBlock(*file, rep->footer.filter_handle, &rep->filter_contents, rbo);
    if (!s.ok()) return s;
    rep->filter = std::make_unique<FilterReader>(rep->filter_contents.slice());
  }
  if (options.block_cache != nullptr) rep->cache_id = options.block_cache->NewId();
  if (rep->file_in_memory) {
    const size_t words = (size_t{rep->index_block->num_entries()} + 63) / 64;
    rep->verified_blocks = std::make_unique<std::atomic<uint64_t>[]>(words);
    for (size_t w = 0; w < words; ++w) rep->verified_blocks[w].store(0, std::memory_order_relaxed);
  }
  rep->file = std::move(file);
  table->reset(new Table(std::move(rep)));
  return Status::OK();
}

Iterator* Table::NewIterator(const ReadOptions& options) const {
  const Rep* r = rep_.get();
  BlockFunction block_fn = [r](const ReadOptions& ro, const Slice& index_value) -> Iterator* {
    BlockHandle handle;
    Status s = r->DecodeDataHandle(index_value, &handle);
    uint32_t ordinal = Rep::kNoOrdinal;
    if (!r->index_block->ValueIndex(index_value, &ordinal)) ordinal = Rep::kNoOrdinal;
    const Block* block = nullptr;
    Cache::Handle* cache_handle = nullptr;
    std::unique_ptr<Block> owned;
    if (s.ok()) s = r->GetBlock(ro, handle, ordinal, &block, &cache_handle, &owned);
    if (!s.ok()) return NewErrorIterator(s);
    Iterator* iter = block->NewIterator(r->options.comparator);
    if (cache_handle != nullptr) {
      Cache* cache = r->options.block_cache;
      iter->RegisterCleanup([cache, cache_handle] { cache->Release(cache_handle); });
    } else {
      Block* raw = owned.release();
      iter->RegisterCleanup([raw] { delete raw; });
    }
    return iter;
  };
  return NewTwoLevelIterator(r->index_block->NewIterator(r->options.comparator),
                             std::move(block_fn), options);
}

Status Table::InternalGet(
    const ReadOptions& options, const Slice& ikey,
    const std::function<void(const Slice& k, const Slice& v)>& handle_result) const {
  const Rep* r = rep_.get();
  if (ikey.size() < kInternalKeyTrailerSize) return Status::InvalidArgument("not an internal key");
  if (r->filter != nullptr && !r->filter->KeyMayMatch(ExtractUserKey(ikey))) return Status::OK();
  const Comparator* cmp = r->options.comparator;
  const Block& index = *r->index_block;
  const uint32_t i = r->IndexLowerBound(ikey);
  if (i == index.num_entries()) return Status::OK();
  BlockHandle handle;
  Status s = r->DecodeDataHandle(index.value(i), &handle);
  if (!s.ok()) return s;
  const Block* block = nullptr;
  Cache::Handle* cache_handle = nullptr;
  std::unique_ptr<Block> owned;
  s = r->GetBlock(options, handle, i, &block, &cache_handle, &owned);
  if (!s.ok()) return s;
  const uint32_t j = block->LowerBound(cmp, ikey);
  if (j < block->num_entries()) {
    std::string scratch;
    handle_result(block->key(j, &scratch), block->value(j));
  } else {
    // The index key is the block's last key and it is >= ikey.
    s = Status::Corruption("index key does not match its data block");
  }
  if (cache_handle != nullptr) r->options.block_cache->Release(cache_handle);
  return s;
}

bool Table::KeyMayMatch(const Slice& user_key) const {
  return rep_->filter == nullptr || rep_->filter->KeyMayMatch(user_key);
}

uint64_t Table::ApproximateOffsetOf(const Slice& ikey) const {
  const Rep* r = rep_.get();
  const uint32_t i = r->IndexLowerBound(ikey);
  if (i == r->index_block->num_entries()) return r->data_end;
  BlockHandle handle;
  if (!r->DecodeDataHandle(r->index_block->value(i), &handle).ok()) return r->data_end;
  return handle.offset;
}

const TableProperties& Table::properties() const { return rep_->props; }

Status Table::VerifyAllBlocks() const {
  const Rep* r = rep_.get();
  const Comparator* cmp = r->options.comparator;
  if (r->footer.filter_handle.size != 0) {
    Status s = FilterReader::Validate(r->filter_contents.slice());
    if (!s.ok()) return s;
  }
  const Block& index = *r->index_block;
  uint64_t expected_offset = 0;
  uint64_t entries = 0;
  std::string prev_key;
  std::string key_scratch;
  for (uint32_t i = 0; i < index.num_entries(); ++i) {
    BlockHandle handle;
    Status s = r->DecodeDataHandle(index.value(i), &handle);
    if (!s.ok()) return s;
    if (handle.offset != expected_offset) return Status::Corruption("data blocks not contiguous");
    std::unique_ptr<Block> block;
    s = ReadAndParseBlock(*r->file, r->file_in_memory, handle, &block);
    if (!s.ok()) return s;
    if (block->num_entries() == 0) return Status::Corruption("empty data block");
    for (uint32_t j = 0; j < block->num_entries(); ++j) {
      const Slice key = block->key(j, &key_scratch);
      if (key.size() < kInternalKeyTrailerSize) return Status::Corruption("bad internal key");
      if (entries > 0 && cmp->Compare(prev_key, key) >= 0) {
        return Status::Corruption("table keys out of order");
      }
      prev_key.assign(key.data(), key.size());
      entries++;
    }
    if (index.key(i, &key_scratch) != Slice(prev_key)) {
      return Status::Corruption("index key is not its block's last key");
    }
    expected_offset = handle.offset + handle.size + kBlockTrailerSize;
  }
  if (expected_offset != r->data_end) return Status::Corruption("gap after the data blocks");
  if (entries != r->props.num_entries || index.num_entries() != r->props.num_data_blocks ||
      expected_offset != r->props.data_bytes) {
    return Status::Corruption("table properties do not match the data blocks");
  }
  return Status::OK();
}

}  // namespace accelkv
