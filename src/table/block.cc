#include "table/block.h"

#include <cstring>

namespace accelkv {

namespace {

// Checks an end-offset array of n entries: non-decreasing. *total = its last
// entry (0 when n == 0).
Status CheckEnds(const char* ends, uint32_t width, uint64_t n, const char* what, uint64_t* total) {
  uint64_t prev = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t e = DecodeBlockEnd(ends, width, i);
    if (e < prev) return Status::Corruption("block end offsets not monotonic", what);
    prev = e;
  }
  *total = prev;
  return Status::OK();
}

constexpr size_t kStackKey = 256;  // keys up to this size are compared from the stack

}  // namespace

Status Block::Validate(const Slice& contents, BlockLayout* layout) {
  const uint64_t size = contents.size();
  if (size < BlockLayout::kFooterSize) return Status::Corruption("block too small");
  const char* data = contents.data();
  const char* footer = data + size - BlockLayout::kFooterSize;
  BlockLayout l;
  l.n = DecodeFixed32(footer);
  l.prefix_size = DecodeFixed32(footer + 4);
  l.key_width = DecodeFixed32(footer + 8);
  l.value_width = DecodeFixed32(footer + 12);
  l.offset_width = size <= BlockLayout::kMaxNarrowSize ? 2 : 4;
  l.size = size;
  const uint64_t n = l.n;
  const bool key_var = l.key_width == BlockLayout::kVariable;
  const bool value_var = l.value_width == BlockLayout::kVariable;
  if (n == 0 && (l.prefix_size != 0 || l.key_width != 0 || l.value_width != 0)) {
    return Status::Corruption("bad empty block");
  }
  const uint64_t arrays = ((key_var ? 1 : 0) + (value_var ? 1 : 0)) * n * l.offset_width;
  if (arrays > size - BlockLayout::kFooterSize) {
    return Status::Corruption("block entry count too large");
  }
  const uint64_t arrays_start = size - BlockLayout::kFooterSize - arrays;
  const char* key_ends = data + arrays_start;
  const char* value_ends = key_ends + (key_var ? n * l.offset_width : 0);
  Status s;
  if (key_var) {
    s = CheckEnds(key_ends, l.offset_width, n, "keys", &l.key_bytes);
  } else {
    l.key_bytes = n * l.key_width;  // < 2^64: both factors < 2^32
  }
  if (!s.ok()) return s;
  if (value_var) {
    s = CheckEnds(value_ends, l.offset_width, n, "values", &l.value_bytes);
  } else {
    l.value_bytes = n * l.value_width;
  }
  if (!s.ok()) return s;
  if (l.prefix_size > arrays_start || l.key_bytes > arrays_start - l.prefix_size ||
      l.value_bytes != arrays_start - l.prefix_size - l.key_bytes) {
    return Status::Corruption("block sections do not fill the block");
  }
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
