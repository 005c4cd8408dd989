#include "table/filter.h"

#include <algorithm>

#include "table/bloom_probe.h"
#include "util/coding.h"
#include "util/hash.h"

namespace accelkv {

namespace {

constexpr int kMaxProbes = 12;

inline void AddHash(uint64_t h, uint32_t num_lines, int num_probes, char* bits) {
  BloomProbes(h, num_lines, num_probes, [bits](uint64_t byte, uint8_t mask) {
    bits[byte] = static_cast<char>(bits[byte] | mask);
    return true;
  });
}

inline bool MatchHash(uint64_t h, uint32_t num_lines, int num_probes, const char* bits) {
  return BloomProbes(h, num_lines, num_probes, [bits](uint64_t byte, uint8_t mask) {
    return (static_cast<uint8_t>(bits[byte]) & mask) != 0;
  });
}

}  // namespace

int BloomNumProbes(int bits_per_key) {
  const int k = bits_per_key <= 0 ? 0 : static_cast<int>((int64_t{bits_per_key} * 69) / 100);
  return std::clamp(k, 1, kMaxProbes);
}

FilterBuilder::FilterBuilder(int bits_per_key) : bits_per_key_(bits_per_key) {}

void FilterBuilder::AddKey(const Slice& user_key) {
  if (!hashes_.empty() && Slice(last_key_) == user_key) return;
  last_key_.assign(user_key.data(), user_key.size());
  hashes_.push_back(Hash64(user_key.data(), user_key.size()));
}

void FilterBuilder::Finish(std::string* dst) const {
  const uint64_t num_lines = BloomNumLines(hashes_.size(), bits_per_key_);
  const int num_probes = BloomNumProbes(bits_per_key_);
  const size_t start = dst->size();
  dst->resize(start + num_lines * kBloomLineBytes, '\0');
  char* bits = dst->data() + start;
  for (uint64_t h : hashes_) AddHash(h, static_cast<uint32_t>(num_lines), num_probes, bits);
  dst->push_back(static_cast<char>(num_probes));
  PutFixed32(dst, static_cast<uint32_t>(num_lines));
}

Status FilterReader::Validate(const Slice& contents) {
  if (contents.size() < 5) return Status::Corruption("filter too small");
  const uint32_t num_lines = DecodeFixed32(contents.data() + contents.size() - 4);
  const int num_probes = static_cast<unsigned char>(contents[contents.size() - 5]);
  if (num_lines == 0) return Status::Corruption("filter has no lines");
  if (num_probes < 1 || num_probes > kMaxProbes) return Status::Corruption("bad filter probes");
  if (BloomFilterSize(num_lines) != contents.size()) {
    return Status::Corruption("filter size does not match num_lines");
  }
  return Status::OK();
}

FilterReader::FilterReader(const Slice& contents) {
  if (!Validate(contents).ok()) return;
  bits_ = contents.data();
  num_lines_ = DecodeFixed32(contents.data() + contents.size() - 4);
  num_probes_ = static_cast<unsigned char>(contents[contents.size() - 5]);
}

bool FilterReader::KeyMayMatch(const Slice& user_key) const {
  if (bits_ == nullptr) return true;
  return MatchHash(Hash64(user_key.data(), user_key.size()), num_lines_, num_probes_, bits_);
}

}  // namespace accelkv
