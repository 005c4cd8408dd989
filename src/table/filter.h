// The table's bloom filter (docs/format/table.md, "Filter block"): one
// cache-line-local bloom filter over the table's distinct user keys. Each key
// hashes (XXH64, seed 0) to one 512-bit line and sets num_probes bits in it.
//
// Thread safety: FilterBuilder is used by one thread at a time; FilterReader
// is immutable and safe for concurrent use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "accelkv/slice.h"
#include "accelkv/status.h"
#include "table/bloom_probe.h"  // kBloomLineBytes, BloomNumLines, BloomFilterSize

namespace accelkv {

// num_probes for bits_per_key: clamp(floor(bits_per_key * 0.69), 1, 12),
// computed exactly as (bits_per_key * 69) / 100 in integers.
int BloomNumProbes(int bits_per_key);

class FilterBuilder {
 public:
  // REQUIRES: bits_per_key > 0
  explicit FilterBuilder(int bits_per_key);

  // Adds a user key; a key byte-equal to the previously added one is skipped.
  void AddKey(const Slice& user_key);
  uint64_t NumKeys() const { return hashes_.size(); }
  // Size Finish() would return now.
  uint64_t EncodedSize() const {
    return BloomFilterSize(BloomNumLines(hashes_.size(), bits_per_key_));
  }
  // Appends the filter contents (bits | num_probes | num_lines) to dst.
  void Finish(std::string* dst) const;

 private:
  const int bits_per_key_;
  std::vector<uint64_t> hashes_;
  std::string last_key_;
};

class FilterReader {
 public:
  // contents must outlive the reader. A malformed filter matches every key.
  explicit FilterReader(const Slice& contents);
  bool KeyMayMatch(const Slice& user_key) const;
  // OK if the contents are a well-formed filter.
  static Status Validate(const Slice& contents);

 private:
  const char* bits_ = nullptr;  // nullptr: malformed, always "may match"
  uint32_t num_lines_ = 0;
  int num_probes_ = 0;
};

}  // namespace accelkv
