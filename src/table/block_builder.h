// BlockBuilder: encodes entries in the block format of docs/FORMAT.md
// ("Block"): a block-wide shared key prefix, the key suffixes, the values,
// end-offset arrays only for the sections whose entries differ in width, and
// a 16-byte footer. Used for data, index and properties blocks. The output is
// a pure function of the added entries.
//
// BlockLayoutTracker computes the same layout from the entries without
// storing them, so a planner that only tracks sizes (the GPU executor's
// device encoder) knows every block's exact size and section offsets.
//
// Thread safety: one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "accelkv/slice.h"

namespace accelkv {

// Length of the common prefix of a and b, at most limit (REQUIRES: both
// have at least limit bytes).
inline uint64_t CommonPrefixLength(const char* a, const char* b, uint64_t limit) {
  uint64_t i = 0;
  while (i + 8 <= limit) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) return i + static_cast<uint64_t>(__builtin_ctzll(x ^ y) / 8);  // little endian
    i += 8;
  }
  while (i < limit && a[i] == b[i]) ++i;
  return i;
}

// Where everything of one block lives (docs/FORMAT.md, "Block").
struct BlockLayout {
  // key_width / value_width of a section whose entries differ in width: its
  // end-offset array is present.
  static constexpr uint32_t kVariable = 0xffffffffu;
  // Bytes of the footer: n, prefix_size, key_width, value_width (fixed32 each).
  static constexpr uint64_t kFooterSize = 16;
  // Largest contents size whose end offsets are 2 bytes wide.
  static constexpr uint64_t kMaxNarrowSize = 0xffff;

  uint32_t n = 0;
  uint32_t prefix_size = 0;   // P: bytes every key of the block starts with
  uint32_t key_width = 0;     // suffix length of every key, or kVariable
  uint32_t value_width = 0;   // length of every value, or kVariable
  uint64_t key_bytes = 0;     // KS: the key-suffix section
  uint64_t value_bytes = 0;   // V: the value section
  uint32_t offset_width = 2;  // W: bytes per end offset, 2 or 4
  uint64_t size = kFooterSize;

  uint64_t keys_offset() const { return prefix_size; }
  uint64_t values_offset() const { return prefix_size + key_bytes; }
  // The end-offset arrays, key_ends first; each n * offset_width bytes when present.
  uint64_t key_ends_offset() const { return values_offset() + value_bytes; }
  uint64_t value_ends_offset() const {
    return key_ends_offset() + (key_width == kVariable ? uint64_t{n} * offset_width : 0);
  }
  uint64_t footer_offset() const { return size - kFooterSize; }

  // Fills offset_width and size from the other fields.
  void ComputeSize();
};

// Tracks the layout of a block as entries are added.
class BlockLayoutTracker {
 public:
  void Add(const Slice& key, const Slice& value);
  void Reset();

  // The same as Add for a caller that knows `shared`, the length of the
  // common prefix of the key and the key added just before it (ignored for
  // the first entry): the block's prefix is the least such length, since the
  // common prefix of a sequence of keys is the least common prefix of
  // adjacent ones. The key itself is not kept, so a tracker fed this way
  // since Reset() must not be fed by Add or asked SizeWith.
  void AddSized(uint64_t key_size, uint64_t value_size, uint64_t shared) {
    if (n_ == 0) {
      prefix_ = key_size;
      key_size_ = key_size;
      value_size_ = value_size;
    } else {
      prefix_ = shared < prefix_ ? shared : prefix_;
      keys_fixed_ = keys_fixed_ && key_size == key_size_;
      values_fixed_ = values_fixed_ && value_size == value_size_;
    }
    ++n_;
    raw_key_bytes_ += key_size;
    value_bytes_ += value_size;
  }
  // Many AddSized calls at once, for a caller that summed them: count more
  // entries with these key and value bytes, whose least `shared` is
  // min_shared, and whose key (value) sizes all equal the block's first
  // key (value) size or not (first_key_size(), first_value_size()).
  // REQUIRES: !empty().
  void AddSizedRun(uint64_t count, uint64_t key_bytes, uint64_t value_bytes, uint64_t min_shared,
                   bool keys_of_first_size, bool values_of_first_size) {
    prefix_ = min_shared < prefix_ ? min_shared : prefix_;
    keys_fixed_ = keys_fixed_ && keys_of_first_size;
    values_fixed_ = values_fixed_ && values_of_first_size;
    n_ += count;
    raw_key_bytes_ += key_bytes;
    value_bytes_ += value_bytes;
  }
  // The first entry's key and value sizes (REQUIRES: !empty()).
  uint64_t first_key_size() const { return key_size_; }
  uint64_t first_value_size() const { return value_size_; }
  // SizeWith for such a caller (shared as for AddSized).
  uint64_t SizeWithSized(uint64_t key_size, uint64_t value_size, uint64_t shared) const;

  uint64_t NumEntries() const { return n_; }
  bool empty() const { return n_ == 0; }
  // The layout a block of the entries added so far has.
  BlockLayout Layout() const;
  // Layout().size, computed without building the layout.
  uint64_t Size() const;
  // Size() if (key, value) were added next.
  uint64_t SizeWith(const Slice& key, const Slice& value) const;

 private:
  std::string first_key_;
  uint64_t n_ = 0;
  uint64_t prefix_ = 0;  // common prefix of the keys so far
  uint64_t raw_key_bytes_ = 0;
  uint64_t value_bytes_ = 0;
  uint64_t key_size_ = 0;    // first key's size, while all keys have it
  uint64_t value_size_ = 0;  // first value's size, while all values have it
  bool keys_fixed_ = true;
  bool values_fixed_ = true;
};

class BlockBuilder {
 public:
  // Largest block contents: sizes and offsets are at most fixed32.
  static constexpr uint64_t kMaxBlockSize = 0xffffffffull;

  BlockBuilder() = default;
  BlockBuilder(const BlockBuilder&) = delete;
  BlockBuilder& operator=(const BlockBuilder&) = delete;

  // Appends an entry. The caller keeps keys in the order it wants stored.
  // REQUIRES: Finish() not called since the last Reset();
  //           SizeWith(key, value) <= kMaxBlockSize.
  void Add(const Slice& key, const Slice& value);

  // Returns block_contents; valid until Reset() or destruction.
  Slice Finish();
  void Reset();

  // Exact size Finish() would return now.
  uint64_t CurrentSizeEstimate() const { return tracker_.Size(); }
  // Exact size Finish() would return after Add(key, value).
  uint64_t SizeWith(const Slice& key, const Slice& value) const {
    return tracker_.SizeWith(key, value);
  }
  // A cheap upper bound of SizeWith(key, value): the size with no shared
  // prefix and both end-offset arrays 4 bytes wide.
  uint64_t SizeBoundWith(const Slice& key, const Slice& value) const {
    return SizeBound(keys_.size() + key.size(), values_.size() + value.size(),
                     key_ends_.size() + 1);
  }
  // A cheap upper bound of CurrentSizeEstimate(), by the same argument.
  uint64_t CurrentSizeBound() const {
    return SizeBound(keys_.size(), values_.size(), key_ends_.size());
  }
  // The bound of a block of n entries whose full keys total key_bytes and
  // values value_bytes: P + (key_bytes - n * P) + value_bytes + A * n * W +
  // 16 with A * W <= 8 and P >= 0.
  static uint64_t SizeBound(uint64_t key_bytes, uint64_t value_bytes, uint64_t n) {
    return key_bytes + value_bytes + 8 * n + BlockLayout::kFooterSize;
  }
  size_t NumEntries() const { return key_ends_.size(); }
  bool empty() const { return key_ends_.empty(); }

 private:
  BlockLayoutTracker tracker_;
  std::string keys_;  // full keys, concatenated
  std::string values_;
  std::vector<uint64_t> key_ends_;    // end of key i within keys_
  std::vector<uint64_t> value_ends_;  // end of value i within values_
  std::string result_;
  bool finished_ = false;
};

}  // namespace accelkv
