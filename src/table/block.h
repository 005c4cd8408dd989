// Block: a decoded, validated block (docs/format/table.md, "Block") that owns
// its bytes. Entry i's key and value are reached in O(1) through the fixed32
// offset arrays, so lookups are a plain binary search without allocations.
//
// Thread safety: immutable after Parse(); safe for concurrent use. A
// Block::Iterator is used by one thread at a time and must not outlive its Block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "accelkv/comparator.h"
#include "accelkv/iterator.h"
#include "accelkv/slice.h"
#include "accelkv/status.h"
#include "table/format.h"
#include "util/coding.h"

namespace accelkv {

class Block {
 public:
  class Iterator;

  // Validates contents (size, entry count, monotonic in-bounds offsets, section
  // boundaries) and takes ownership. Corruption if malformed; never reads out
  // of bounds whatever the bytes.
  static Status Parse(BlockContents contents, std::unique_ptr<Block>* result);
  // The same checks, without taking ownership.
  static Status Validate(const Slice& contents);

  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  uint32_t num_entries() const { return n_; }
  size_t size() const { return contents_.size; }

  // REQUIRES: i < num_entries()
  Slice key(uint32_t i) const {
    const uint32_t b = DecodeFixed32(key_offsets_ + 4 * i);
    const uint32_t e = DecodeFixed32(key_offsets_ + 4 * (i + 1));
    return Slice(data_ + b, e - b);
  }
  // REQUIRES: i < num_entries()
  Slice value(uint32_t i) const {
    const uint32_t b = DecodeFixed32(value_offsets_ + 4 * i);
    const uint32_t e = DecodeFixed32(value_offsets_ + 4 * (i + 1));
    return Slice(data_ + b, e - b);
  }

  // Index of the first entry with key >= target, or num_entries().
  uint32_t LowerBound(const Comparator* cmp, const Slice& target) const;
  // Index of the first entry with key > target, or num_entries().
  uint32_t UpperBound(const Comparator* cmp, const Slice& target) const;

  // An iterator ordered by cmp (the order the keys were stored in).
  // REQUIRES: cmp and this block outlive the iterator.
  ::accelkv::Iterator* NewIterator(const Comparator* cmp) const;

 private:
  explicit Block(BlockContents contents);

  BlockContents contents_;
  const char* data_ = nullptr;
  const char* key_offsets_ = nullptr;
  const char* value_offsets_ = nullptr;
  uint32_t n_ = 0;
};

// Iterates one block by entry index; status() is always OK (the block was
// validated by Parse).
class Block::Iterator final : public ::accelkv::Iterator {
 public:
  Iterator(const Block* block, const Comparator* cmp) : block_(block), cmp_(cmp) {
    current_ = block->num_entries();
  }
  bool Valid() const override { return current_ < block_->num_entries(); }
  void SeekToFirst() override { current_ = 0; }
  void SeekToLast() override {
    current_ = block_->num_entries() == 0 ? 0 : block_->num_entries() - 1;
  }
  void Seek(const Slice& target) override { current_ = block_->LowerBound(cmp_, target); }
  void SeekForPrev(const Slice& target) override {
    const uint32_t ub = block_->UpperBound(cmp_, target);
    current_ = ub == 0 ? block_->num_entries() : ub - 1;
  }
  void Next() override { ++current_; }
  void Prev() override { current_ = current_ == 0 ? block_->num_entries() : current_ - 1; }
  Slice key() const override { return block_->key(current_); }
  Slice value() const override { return block_->value(current_); }
  Status status() const override { return Status::OK(); }

 private:
  const Block* const block_;
  const Comparator* const cmp_;
  uint32_t current_;  // num_entries() when not valid
};

}  // namespace accelkv
