#include "table/block_builder.h"

#include <cassert>

#include "util/coding.h"

namespace accelkv {

void BlockBuilder::Add(const Slice& key, const Slice& value) {
  assert(!finished_);
  assert(CurrentSizeEstimate() + key.size() + value.size() + 8 <= kMaxBlockSize);
  keys_.append(key.data(), key.size());
  values_.append(value.data(), value.size());
  key_ends_.push_back(static_cast<uint32_t>(keys_.size()));
  value_ends_.push_back(static_cast<uint32_t>(values_.size()));
}

Slice BlockBuilder::Finish() {
  assert(!finished_);
  finished_ = true;
  const uint32_t n = static_cast<uint32_t>(key_ends_.size());
  const uint32_t key_bytes = static_cast<uint32_t>(keys_.size());
  result_.clear();
  result_.reserve(static_cast<size_t>(CurrentSizeEstimate()));
  result_.append(keys_);
  result_.append(values_);
  PutFixed32(&result_, 0);
  for (uint32_t end : key_ends_) PutFixed32(&result_, end);
  PutFixed32(&result_, key_bytes);
  for (uint32_t end : value_ends_) PutFixed32(&result_, key_bytes + end);
  PutFixed32(&result_, n);
  return Slice(result_);
}

void BlockBuilder::Reset() {
  keys_.clear();
  values_.clear();
  key_ends_.clear();
  value_ends_.clear();
  result_.clear();
  finished_ = false;
}

}  // namespace accelkv
