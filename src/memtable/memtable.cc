#include "memtable/memtable.h"

#include <cassert>
#include <cstring>

#include "util/coding.h"

namespace accelkv {
namespace {

// The value of an encoded entry whose internal key is ikey (ikey points into
// the entry).
Slice ValueAfter(const Slice& ikey) {
  const char* p = ikey.data() + ikey.size();
  uint32_t len = 0;
  p = GetVarint32Ptr(p, p + 5, &len);
  return Slice(p, len);
}

}  // namespace

// IndexIterator: SkipList<KeyComparator>::Iterator or BTreeIndex::Iterator.
template <class IndexIterator>
class MemTable::MemTableIterator final : public Iterator {
 public:
  template <class Index>
  explicit MemTableIterator(const Index* index) : iter_(index) {}

  bool Valid() const override { return iter_.Valid(); }
  void SeekToFirst() override { iter_.SeekToFirst(); }
  void SeekToLast() override { iter_.SeekToLast(); }
  void Seek(const Slice& target) override {
    assert(target.size() >= kInternalKeyTrailerSize);
    iter_.Seek(target);
  }
  void SeekForPrev(const Slice& target) override {
    assert(target.size() >= kInternalKeyTrailerSize);
    iter_.SeekForPrev(target);
  }
  void Next() override { iter_.Next(); }
  void Prev() override { iter_.Prev(); }
  Slice key() const override { return KeyComparator::Decode(iter_.key()); }
  Slice value() const override { return ValueAfter(key()); }
  Status status() const override { return Status::OK(); }

 private:
  IndexIterator iter_;
};

MemTable::MemTable(const InternalKeyComparator& cmp, bool huge_arena, bool btree)
    : comparator_{cmp.user_comparator(), cmp.user_comparator()->IsBytewise()}, arena_(huge_arena) {
  if (btree && comparator_.bytewise) {
    btree_ = std::make_unique<BTreeIndex>(huge_arena);
  } else {
    table_.emplace(comparator_, &arena_);
  }
}

void MemTable::Unref() {
  --refs_;
  assert(refs_ >= 0);
  if (refs_ <= 0) delete this;
}

Iterator* MemTable::NewIterator() {
  if (btree_) return new MemTableIterator<BTreeIndex::Iterator>(btree_.get());
  return new MemTableIterator<Table::Iterator>(&*table_);
}

void MemTable::Add(SequenceNumber seq, ValueType type, const Slice& key, const Slice& value) {
  const char* entry = Prepare(seq, type, key, value);
  if (btree_) {
    btree_->Insert(entry);
  } else {
    table_->Insert(entry);
  }
}

const char* MemTable::Prepare(SequenceNumber seq, ValueType type, const Slice& key,
                              const Slice& value) {
  const Slice v = type == ValueType::kValue ? value : Slice();
  const size_t ikey_size = key.size() + kInternalKeyTrailerSize;
  const size_t encoded_len = static_cast<size_t>(VarintLength(ikey_size)) + ikey_size +
                             static_cast<size_t>(VarintLength(v.size())) + v.size();
  char* buf = btree_ ? arena_.Allocate(encoded_len) : table_->AllocateKey(encoded_len);
  char* p = EncodeVarint32(buf, static_cast<uint32_t>(ikey_size));
  if (!key.empty()) std::memcpy(p, key.data(), key.size());
  p += key.size();
  EncodeFixed64(p, PackSequenceAndType(seq, type));
  p += kInternalKeyTrailerSize;
  p = EncodeVarint32(p, static_cast<uint32_t>(v.size()));
  if (!v.empty()) std::memcpy(p, v.data(), v.size());
  assert(p + v.size() == buf + encoded_len);
  // One writer: a plain load + store is enough, and cheaper than an RMW.
  num_entries_.store(num_entries_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (type == ValueType::kDeletion) {
    num_deletions_.store(num_deletions_.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
  }
  return buf;
}

bool MemTable::Get(const LookupKey& key, std::string* value, Status* s) {
  const Slice target = key.internal_key();
  const char* entry = btree_ ? btree_->FindFirstAtLeast(target) : table_->FindFirstAtLeast(target);
  if (entry == nullptr) return false;
  const Slice found = KeyComparator::Decode(entry);
  // The first entry >= (user_key, sequence) is the newest visible version of
  // user_key, if it is an entry of user_key at all.
  if (comparator_.CompareUserKeys(ExtractUserKey(found), key.user_key()) != 0) return false;
  switch (static_cast<ValueType>(ExtractTrailer(found) & 0xff)) {
    case ValueType::kValue: {
      const Slice v = ValueAfter(found);
      value->assign(v.data(), v.size());
      *s = Status::OK();
      return true;
    }
    case ValueType::kDeletion:
      *s = Status::NotFound(Slice());
      return true;
  }
  return false;  // unreachable: Add stores only the types above
}

}  // namespace accelkv
