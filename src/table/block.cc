#include "table/block.h"

namespace accelkv {

Status Block::Validate(const Slice& contents) {
  const uint64_t size = contents.size();
  if (size < 4) return Status::Corruption("block too small");
  const char* data = contents.data();
  const uint64_t n = DecodeFixed32(data + size - 4);
  // key_offsets[n+1] + value_offsets[n+1] + n
  const uint64_t trailer = 8 * (n + 1) + 4;
  if (trailer > size) return Status::Corruption("block entry count too large");
  const uint64_t offsets_start = size - trailer;
  const char* key_offsets = data + offsets_start;
  const char* value_offsets = key_offsets + 4 * (n + 1);
  if (DecodeFixed32(key_offsets) != 0) return Status::Corruption("block key_offsets[0] != 0");
  uint32_t prev = 0;
  for (uint64_t i = 1; i <= n; ++i) {
    const uint32_t off = DecodeFixed32(key_offsets + 4 * i);
    if (off < prev) return Status::Corruption("block key offsets not monotonic");
    prev = off;
  }
  if (DecodeFixed32(value_offsets) != prev) {
    return Status::Corruption("block key_offsets[n] != value_offsets[0]");
  }
  for (uint64_t i = 1; i <= n; ++i) {
    const uint32_t off = DecodeFixed32(value_offsets + 4 * i);
    if (off < prev) return Status::Corruption("block value offsets not monotonic");
    prev = off;
  }
  if (prev != offsets_start) return Status::Corruption("block value_offsets[n] != offsets start");
  return Status::OK();
}

Status Block::Parse(BlockContents contents, std::unique_ptr<Block>* result) {
  Status s = Validate(contents.slice());
  if (!s.ok()) return s;
  result->reset(new Block(std::move(contents)));
  return Status::OK();
}

Block::Block(BlockContents contents) : contents_(std::move(contents)) {
  data_ = contents_.slice().data();
  const size_t size = contents_.size;
  n_ = DecodeFixed32(data_ + size - 4);
  key_offsets_ = data_ + size - 4 - 8 * (uint64_t{n_} + 1);
  value_offsets_ = key_offsets_ + 4 * (uint64_t{n_} + 1);
}

uint32_t Block::LowerBound(const Comparator* cmp, const Slice& target) const {
  uint32_t lo = 0;
  uint32_t hi = n_;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (cmp->Compare(key(mid), target) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

uint32_t Block::UpperBound(const Comparator* cmp, const Slice& target) const {
  uint32_t lo = 0;
  uint32_t hi = n_;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (cmp->Compare(key(mid), target) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

::accelkv::Iterator* Block::NewIterator(const Comparator* cmp) const {
  return new Iterator(this, cmp);
}

}  // namespace accelkv
