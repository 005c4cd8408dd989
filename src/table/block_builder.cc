#include "table/block_builder.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "util/coding.h"

namespace accelkv {

namespace {

void StoreEnd(char* dst, uint32_t width, uint64_t value) {
  if (width == 2) {
    dst[0] = static_cast<char>(value);
    dst[1] = static_cast<char>(value >> 8);
  } else {
    EncodeFixed32(dst, static_cast<uint32_t>(value));
  }
}

}  // namespace

void BlockLayout::ComputeSize() {
  const uint64_t arrays = (key_width == kVariable ? 1 : 0) + (value_width == kVariable ? 1 : 0);
  const uint64_t base = uint64_t{prefix_size} + key_bytes + value_bytes + kFooterSize;
  const uint64_t narrow = base + 2 * uint64_t{n} * arrays;
  if (narrow <= kMaxNarrowSize) {
    offset_width = 2;
    size = narrow;
  } else {
    offset_width = 4;
    size = base + 4 * uint64_t{n} * arrays;
  }
}

void BlockLayoutTracker::Add(const Slice& key, const Slice& value) {
  if (n_ == 0) first_key_.assign(key.data(), key.size());
  // The common prefix with the first key, up to the current prefix, is the new prefix.
  const uint64_t shared = n_ == 0 ? 0
                                  : CommonPrefixLength(first_key_.data(), key.data(),
                                                       std::min<uint64_t>(prefix_, key.size()));
  AddSized(key.size(), value.size(), shared);
}

void BlockLayoutTracker::Reset() {
  first_key_.clear();  // keeps its capacity: one tracker serves many blocks
  n_ = 0;
  prefix_ = 0;
  raw_key_bytes_ = 0;
  value_bytes_ = 0;
  key_size_ = 0;
  value_size_ = 0;
  keys_fixed_ = true;
  values_fixed_ = true;
}

BlockLayout BlockLayoutTracker::Layout() const {
  BlockLayout l;
  l.n = static_cast<uint32_t>(n_);
  if (n_ > 0) {
    l.prefix_size = static_cast<uint32_t>(prefix_);
    l.key_width = keys_fixed_ ? static_cast<uint32_t>(key_size_ - prefix_) : BlockLayout::kVariable;
    l.value_width = values_fixed_ ? static_cast<uint32_t>(value_size_) : BlockLayout::kVariable;
    l.key_bytes = raw_key_bytes_ - n_ * prefix_;
    l.value_bytes = value_bytes_;
  }
  l.ComputeSize();
  return l;
}

uint64_t BlockLayoutTracker::Size() const { return Layout().size; }

uint64_t BlockLayoutTracker::SizeWith(const Slice& key, const Slice& value) const {
  const uint64_t shared = n_ == 0 ? 0
                                  : CommonPrefixLength(first_key_.data(), key.data(),
                                                       std::min<uint64_t>(prefix_, key.size()));
  return SizeWithSized(key.size(), value.size(), shared);
}

uint64_t BlockLayoutTracker::SizeWithSized(uint64_t key_size, uint64_t value_size,
                                           uint64_t shared) const {
  BlockLayout l;
  if (n_ == 0) {
    l.n = 1;
    l.prefix_size = static_cast<uint32_t>(key_size);
    l.value_width = static_cast<uint32_t>(value_size);
    l.value_bytes = value_size;
    l.ComputeSize();
    return l.size;
  }
  const uint64_t prefix = std::min(prefix_, shared);
  l.n = static_cast<uint32_t>(n_ + 1);
  l.prefix_size = static_cast<uint32_t>(prefix);
  l.key_width = keys_fixed_ && key_size == key_size_ ? static_cast<uint32_t>(key_size_ - prefix)
                                                     : BlockLayout::kVariable;
  l.value_width = values_fixed_ && value_size == value_size_ ? static_cast<uint32_t>(value_size_)
                                                             : BlockLayout::kVariable;
  l.key_bytes = raw_key_bytes_ + key_size - (n_ + 1) * prefix;
  l.value_bytes = value_bytes_ + value_size;
  l.ComputeSize();
  return l.size;
}

void BlockBuilder::Add(const Slice& key, const Slice& value) {
  assert(!finished_);
  tracker_.Add(key, value);
  assert(tracker_.Size() <= kMaxBlockSize);
  keys_.append(key.data(), key.size());
  values_.append(value.data(), value.size());
  key_ends_.push_back(keys_.size());
  value_ends_.push_back(values_.size());
}

Slice BlockBuilder::Finish() {
  assert(!finished_);
  finished_ = true;
  const BlockLayout l = tracker_.Layout();
  result_.assign(static_cast<size_t>(l.size), '\0');
  char* out = result_.data();
  const uint64_t p = l.prefix_size;
  std::memcpy(out, keys_.data(), static_cast<size_t>(p));  // nothing when n == 0
  char* suffixes = out + l.keys_offset();
  char* key_ends = out + l.key_ends_offset();
  char* value_ends = out + l.value_ends_offset();
  uint64_t key_begin = 0;
  uint64_t suffix_end = 0;
  for (size_t i = 0; i < key_ends_.size(); ++i) {
    const uint64_t suffix = key_ends_[i] - key_begin - p;
    std::memcpy(suffixes + suffix_end, keys_.data() + key_begin + p, static_cast<size_t>(suffix));
    suffix_end += suffix;
    key_begin = key_ends_[i];
    if (l.key_width == BlockLayout::kVariable) {
      StoreEnd(key_ends + i * l.offset_width, l.offset_width, suffix_end);
    }
    if (l.value_width == BlockLayout::kVariable) {
      StoreEnd(value_ends + i * l.offset_width, l.offset_width, value_ends_[i]);
    }
  }
  if (!values_.empty()) std::memcpy(out + l.values_offset(), values_.data(), values_.size());
  char* footer = out + l.footer_offset();
  EncodeFixed32(footer, l.n);
  EncodeFixed32(footer + 4, l.prefix_size);
  EncodeFixed32(footer + 8, l.key_width);
  EncodeFixed32(footer + 12, l.value_width);
  return Slice(result_);
}

void BlockBuilder::Reset() {
  tracker_.Reset();
  keys_.clear();
  values_.clear();
  key_ends_.clear();
  value_ends_.clear();
  result_.clear();
  finished_ = false;
}

}  // namespace accelkv
