// Block: a decoded, validated block (docs/FORMAT.md, "Block") over its bytes.
// Every key of a block starts with the block's shared prefix; entry i's key
// suffix and value are reached in O(1) (fixed widths, or the end-offset
// arrays), so lookups are a plain binary search.
//
// Thread safety: immutable after Parse(); safe for concurrent use. A
// Block::Iterator is used by one thread at a time and must not outlive its Block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "accelkv/comparator.h"
#include "accelkv/iterator.h"
#include "accelkv/slice.h"
#include "accelkv/status.h"
#include "table/block_builder.h"
#include "table/block_check.h"
#include "table/format.h"

namespace accelkv {

// The Status of a CheckBlockLayout result (table/block_check.h): OK, or
// Corruption with the message its value names.
Status BlockCheckStatus(BlockCheck check);

class Block {
 public:
  class Iterator;

  // Validates contents (footer, section sizes, monotonic in-bounds end
  // offsets) and takes ownership. Corruption if malformed; never reads out of
  // bounds whatever the bytes.
  static Status Parse(BlockContents contents, std::unique_ptr<Block>* result);
  // The same checks (CheckBlockLayout, table/block_check.h, which CUDA
  // kernels share), without taking ownership; *layout (if not null) is set
  // on success.
  static Status Validate(const Slice& contents, BlockLayout* layout = nullptr);

  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  uint32_t num_entries() const { return layout_.n; }
  size_t size() const { return size_; }
  const BlockLayout& layout() const { return layout_; }

  // The bytes every key of the block starts with.
  Slice prefix() const { return Slice(data_, layout_.prefix_size); }
  // REQUIRES: i < num_entries(). Key i without prefix().
  Slice key_suffix(uint32_t i) const {
    const uint64_t b = KeyBegin(i);
    return Slice(keys_ + b, KeyEnd(i) - b);
  }
  // REQUIRES: i < num_entries(). Key i: prefix() ++ key_suffix(i), in
  // *scratch unless the prefix is empty (then in the block itself).
  Slice key(uint32_t i, std::string* scratch) const;
  // REQUIRES: i < num_entries()
  Slice value(uint32_t i) const {
    uint64_t b, e;
    if (layout_.value_width != BlockLayout::kVariable) {
      b = uint64_t{i} * layout_.value_width;
      e = b + layout_.value_width;
    } else {
      b = i == 0 ? 0 : End(value_ends_, i - 1);
      e = End(value_ends_, i);
    }
    return Slice(values_ + b, e - b);
  }

  // Index of the first entry with key >= target, or num_entries(); with
  // [lo, hi) given, the search is limited to those entries (REQUIRES: lo <=
  // hi <= num_entries(), the answer lies in [lo, hi]).
  uint32_t LowerBound(const Comparator* cmp, const Slice& target) const {
    return Bound(cmp, target, /*upper=*/false, 0, num_entries());
  }
  uint32_t LowerBound(const Comparator* cmp, const Slice& target, uint32_t lo, uint32_t hi) const {
    return Bound(cmp, target, /*upper=*/false, lo, hi);
  }
  // Index of the first entry with key > target, or num_entries().
  uint32_t UpperBound(const Comparator* cmp, const Slice& target) const {
    return Bound(cmp, target, /*upper=*/true, 0, num_entries());
  }

  // If value is a slice this block returned as value(i) and its values have
  // a fixed width, sets *i and returns true; otherwise false.
  bool ValueIndex(const Slice& value, uint32_t* i) const {
    const size_t w = layout_.value_width;
    // Addresses as integers: value may point anywhere (an unrelated buffer).
    const auto at = reinterpret_cast<uintptr_t>(value.data());
    const auto base = reinterpret_cast<uintptr_t>(values_);
    if (w == BlockLayout::kVariable || w == 0 || value.size() != w || at < base) return false;
    const uintptr_t offset = at - base;
    if (offset % w != 0 || offset / w >= num_entries()) return false;
    *i = static_cast<uint32_t>(offset / w);
    return true;
  }

  // An iterator ordered by cmp (the order the keys were stored in).
  // REQUIRES: cmp and this block outlive the iterator.
  ::accelkv::Iterator* NewIterator(const Comparator* cmp) const;

 private:
  Block(BlockContents contents, const BlockLayout& layout);

  uint64_t End(const char* ends, uint32_t i) const {
    return BlockLoadEnd(reinterpret_cast<const uint8_t*>(ends), layout_.offset_width, i);
  }
  uint64_t KeyBegin(uint32_t i) const {
    if (layout_.key_width != BlockLayout::kVariable) return uint64_t{i} * layout_.key_width;
    return i == 0 ? 0 : End(key_ends_, i - 1);
  }
  uint64_t KeyEnd(uint32_t i) const {
    if (layout_.key_width != BlockLayout::kVariable) return uint64_t{i + 1} * layout_.key_width;
    return End(key_ends_, i);
  }
  // The first entry in [lo, hi) whose key is >= target (> target if upper), or hi.
  uint32_t Bound(const Comparator* cmp, const Slice& target, bool upper, uint32_t lo,
                 uint32_t hi) const;
  // Compares key i with target by cmp.
  int CompareKey(const Comparator* cmp, uint32_t i, const Slice& target, char* buf, size_t buf_size,
                 std::string* spill) const;

  BlockContents contents_;
  BlockLayout layout_;
  size_t size_ = 0;
  const char* data_ = nullptr;
  const char* keys_ = nullptr;
  const char* values_ = nullptr;
  const char* key_ends_ = nullptr;
  const char* value_ends_ = nullptr;
};

// Iterates one block by entry index; status() is always OK (the block was
// validated by Parse). key() is the materialized key of the current entry.
class Block::Iterator final : public ::accelkv::Iterator {
 public:
  Iterator(const Block* block, const Comparator* cmp);
  bool Valid() const override { return current_ < block_->num_entries(); }
  void SeekToFirst() override { Set(0); }
  void SeekToLast() override { Set(block_->num_entries() == 0 ? 0 : block_->num_entries() - 1); }
  void Seek(const Slice& target) override { Set(block_->LowerBound(cmp_, target)); }
  void SeekForPrev(const Slice& target) override {
    const uint32_t ub = block_->UpperBound(cmp_, target);
    Set(ub == 0 ? block_->num_entries() : ub - 1);
  }
  void Next() override { Set(current_ + 1); }
  void Prev() override { Set(current_ == 0 ? block_->num_entries() : current_ - 1); }
  Slice key() const override { return Slice(key_); }
  Slice value() const override { return block_->value(current_); }
  Status status() const override { return Status::OK(); }

 private:
  void Set(uint32_t i);

  const Block* const block_;
  const Comparator* const cmp_;
  uint32_t current_;  // num_entries() when not valid
  std::string key_;   // prefix ++ current suffix
};

}  // namespace accelkv
