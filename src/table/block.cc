#include "table/block.h"

#include <cstring>

namespace accelkv {

namespace {

constexpr size_t kStackKey = 256;  // keys up to this size are compared from the stack

}  // namespace

Status BlockCheckStatus(BlockCheck check) {
  switch (check) {
    case BlockCheck::kOk:
      return Status::OK();
    case BlockCheck::kTooSmall:
      return Status::Corruption("block too small");
    case BlockCheck::kBadEmpty:
      return Status::Corruption("bad empty block");
    case BlockCheck::kCountTooLarge:
      return Status::Corruption("block entry count too large");
    case BlockCheck::kKeyEndsNotMonotonic:
      return Status::Corruption("block end offsets not monotonic", "keys");
    case BlockCheck::kValueEndsNotMonotonic:
      return Status::Corruption("block end offsets not monotonic", "values");
    case BlockCheck::kSectionsDoNotFill:
      return Status::Corruption("block sections do not fill the block");
  }
  return Status::Corruption("block check failed");
}

Status Block::Validate(const Slice& contents, BlockLayout* layout) {
  BlockLayout l;
  const BlockCheck check =
      CheckBlockLayout(reinterpret_cast<const uint8_t*>(contents.data()), contents.size(), &l);
  if (check != BlockCheck::kOk) return BlockCheckStatus(check);
  if (layout != nullptr) *layout = l;
  return Status::OK();
}

Status Block::Parse(BlockContents contents, std::unique_ptr<Block>* result) {
  BlockLayout layout;
  Status s = Validate(contents.slice(), &layout);
  if (!s.ok()) return s;
  result->reset(new Block(std::move(contents), layout));
  return Status::OK();
}

Block::Block(BlockContents contents, const BlockLayout& layout)
    : contents_(std::move(contents)), layout_(layout) {
  const Slice bytes = contents_.slice();
  data_ = bytes.data();
  size_ = bytes.size();
  keys_ = data_ + layout_.keys_offset();
  values_ = data_ + layout_.values_offset();
  key_ends_ = data_ + layout_.key_ends_offset();
  value_ends_ = data_ + layout_.value_ends_offset();
}

Slice Block::key(uint32_t i, std::string* scratch) const {
  const Slice suffix = key_suffix(i);
  if (layout_.prefix_size == 0) return suffix;
  scratch->assign(data_, layout_.prefix_size);
  scratch->append(suffix.data(), suffix.size());
  return Slice(*scratch);
}

int Block::CompareKey(const Comparator* cmp, uint32_t i, const Slice& target, char* buf,
                      size_t buf_size, std::string* spill) const {
  const Slice suffix = key_suffix(i);
  const size_t p = layout_.prefix_size;
  if (p == 0) return cmp->Compare(suffix, target);
  const size_t len = p + suffix.size();
  if (len <= buf_size) {
    std::memcpy(buf + p, suffix.data(), suffix.size());  // buf already holds the prefix
    return cmp->Compare(Slice(buf, len), target);
  }
  return cmp->Compare(key(i, spill), target);
}

uint32_t Block::Bound(const Comparator* cmp, const Slice& target, bool upper, uint32_t lo,
                      uint32_t hi) const {
  char buf[kStackKey];
  std::string spill;
  if (layout_.prefix_size <= kStackKey) std::memcpy(buf, data_, layout_.prefix_size);
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const int c = CompareKey(cmp, mid, target, buf, sizeof(buf), &spill);
    if (c < 0 || (upper && c == 0)) {
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

Block::Iterator::Iterator(const Block* block, const Comparator* cmp)
    : block_(block), cmp_(cmp), current_(block->num_entries()) {
  const Slice prefix = block->prefix();
  key_.assign(prefix.data(), prefix.size());
}

void Block::Iterator::Set(uint32_t i) {
  current_ = i;
  if (i >= block_->num_entries()) return;
  const Slice suffix = block_->key_suffix(i);
  key_.resize(block_->layout().prefix_size);
  key_.append(suffix.data(), suffix.size());
}

}  // namespace accelkv
