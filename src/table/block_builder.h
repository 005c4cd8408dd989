// BlockBuilder: encodes sorted entries in the block format of
// docs/format/table.md (keys section | values section | key_offsets[n+1] |
// value_offsets[n+1] | n), no prefix compression. Used for data, index and
// properties blocks. The output is a pure function of the added entries.
//
// Thread safety: one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "accelkv/slice.h"

namespace accelkv {

class BlockBuilder {
 public:
  // Largest block_contents a block may have: offsets are fixed32.
  static constexpr uint64_t kMaxBlockSize = 0xffffffffull;

  BlockBuilder() = default;
  BlockBuilder(const BlockBuilder&) = delete;
  BlockBuilder& operator=(const BlockBuilder&) = delete;

  // Appends an entry. The caller keeps keys in the order it wants stored.
  // REQUIRES: Finish() not called since the last Reset();
  //           CurrentSizeEstimate() + key.size() + value.size() + 8 <= kMaxBlockSize.
  void Add(const Slice& key, const Slice& value);

  // Returns block_contents; valid until Reset() or destruction.
  Slice Finish();
  void Reset();

  // Exact size Finish() would return now.
  uint64_t CurrentSizeEstimate() const {
    return keys_.size() + values_.size() + 8 * (uint64_t{key_ends_.size()} + 1) + 4;
  }
  size_t NumEntries() const { return key_ends_.size(); }
  bool empty() const { return key_ends_.empty(); }

 private:
  std::string keys_;
  std::string values_;
  std::vector<uint32_t> key_ends_;    // end offset of key i within keys_
  std::vector<uint32_t> value_ends_;  // end offset of value i within values_
  std::string result_;
  bool finished_ = false;
};

}  // namespace accelkv
