// WriteBatch and WriteBatchInternal. Layout (docs/FORMAT.md, "WriteBatch"):
//
//   fixed64 sequence | fixed32 count | record*
//   record := kTypeValue(0x1) varstring key varstring value
//           | kTypeDeletion(0x0) varstring key
//   varstring := varint32 length | bytes
//
// A batch whose rep_ is empty (a moved-from batch) behaves as an empty batch.
#include "accelkv/write_batch.h"

#include <cstring>
#include <string>

#include "memtable/memtable.h"
#include "memtable/write_batch_internal.h"
#include "util/coding.h"

namespace accelkv {
namespace {

constexpr size_t kHeaderSize = WriteBatchInternal::kHeaderSize;
constexpr size_t kCountOffset = 8;

void EnsureHeader(std::string* rep) {
  if (rep->size() < kHeaderSize) rep->assign(kHeaderSize, '\0');
}

// Appends one record (tag, then key and, for a Put, value as varstrings)
// and counts it in the header. The record is encoded in place after one
// resize: appended piece by piece (PutLengthPrefixedSlice) a put's batch
// took 320 instructions, so 186 (callgrind, fillrandom;
// bench/results/2026-11-28-dev-single-record-batch.md). A length varint
// holds the size's low 32 bits, as PutLengthPrefixedSlice writes it (the
// same bytes as before for a key or value of 4 GiB or more).
void AppendRecord(std::string* rep, ValueType type, const Slice& key, const Slice* value) {
  EnsureHeader(rep);
  EncodeFixed32(rep->data() + kCountOffset, DecodeFixed32(rep->data() + kCountOffset) + 1);
  const auto key_len = static_cast<uint32_t>(key.size());
  const auto value_len = value != nullptr ? static_cast<uint32_t>(value->size()) : 0u;
  size_t n = 1 + static_cast<size_t>(VarintLength(key_len)) + key.size();
  if (value != nullptr) n += static_cast<size_t>(VarintLength(value_len)) + value->size();
  const size_t at = rep->size();
  rep->resize(at + n);
  char* p = rep->data() + at;
  *p++ = static_cast<char>(type);
  p = EncodeVarint32(p, key_len);
  if (!key.empty()) std::memcpy(p, key.data(), key.size());
  p += key.size();
  if (value != nullptr) {
    p = EncodeVarint32(p, value_len);
    if (!value->empty()) std::memcpy(p, value->data(), value->size());
  }
}

// Calls fn(type, key, value) for each record of rep, in order, until the
// records end or one is malformed; *records counts the well-formed ones.
// Corruption names the first malformed record. Does not check the count.
template <typename Fn>
Status ForEachRecord(const std::string& rep, uint32_t* records, Fn&& fn) {
  *records = 0;
  if (rep.empty()) return Status::OK();
  if (rep.size() < kHeaderSize) return Status::Corruption("malformed WriteBatch (too small)");
  Slice input(rep.data() + kHeaderSize, rep.size() - kHeaderSize);
  Slice key;
  Slice value;
  while (!input.empty()) {
    const auto tag = static_cast<unsigned char>(input[0]);
    input.remove_prefix(1);
    if (tag == static_cast<unsigned char>(ValueType::kValue)) {
      if (!GetLengthPrefixedSlice(&input, &key) || !GetLengthPrefixedSlice(&input, &value)) {
        return Status::Corruption("bad WriteBatch Put");
      }
      fn(ValueType::kValue, key, value);
    } else if (tag == static_cast<unsigned char>(ValueType::kDeletion)) {
      if (!GetLengthPrefixedSlice(&input, &key)) return Status::Corruption("bad WriteBatch Delete");
      fn(ValueType::kDeletion, key, Slice());
    } else {
      return Status::Corruption("unknown WriteBatch tag");
    }
    ++*records;
  }
  return Status::OK();
}

// OK if every record of rep is well formed and their number is the header's
// count; fn(type, key, value) sees each record as it is checked (nothing is
// applied before the whole batch passed).
template <typename Fn>
Status Validate(const std::string& rep, uint32_t header_count, Fn&& fn) {
  uint32_t records = 0;
  Status s = ForEachRecord(rep, &records, fn);
  if (s.ok() && records != header_count) return Status::Corruption("WriteBatch has wrong count");
  return s;
}

Status Validate(const std::string& rep, uint32_t header_count) {
  return Validate(rep, header_count, [](ValueType, const Slice&, const Slice&) {});
}

}  // namespace

WriteBatch::WriteBatch() { rep_.assign(kHeaderSize, '\0'); }

void WriteBatch::Put(const Slice& key, const Slice& value) {
  AppendRecord(&rep_, ValueType::kValue, key, &value);
}

void WriteBatch::Delete(const Slice& key) {
  AppendRecord(&rep_, ValueType::kDeletion, key, nullptr);
}

void WriteBatch::Append(const WriteBatch& src) { WriteBatchInternal::Append(this, &src); }

void WriteBatch::Clear() { rep_.assign(kHeaderSize, '\0'); }

uint32_t WriteBatch::Count() const { return WriteBatchInternal::Count(this); }

Status WriteBatch::Iterate(Handler* handler) const {
  Status s = Validate(rep_, Count());
  if (!s.ok()) return s;
  uint32_t records = 0;
  return ForEachRecord(rep_, &records,
                       [handler](ValueType type, const Slice& key, const Slice& value) {
                         if (type == ValueType::kValue) {
                           handler->Put(key, value);
                         } else {
                           handler->Delete(key);
                         }
                       });
}

uint32_t WriteBatchInternal::Count(const WriteBatch* batch) {
  if (batch->rep_.size() < kHeaderSize) return 0;
  return DecodeFixed32(batch->rep_.data() + kCountOffset);
}

void WriteBatchInternal::SetCount(WriteBatch* batch, uint32_t n) {
  EnsureHeader(&batch->rep_);
  EncodeFixed32(batch->rep_.data() + kCountOffset, n);
}

SequenceNumber WriteBatchInternal::Sequence(const WriteBatch* batch) {
  if (batch->rep_.size() < kHeaderSize) return 0;
  return DecodeFixed64(batch->rep_.data());
}

void WriteBatchInternal::SetSequence(WriteBatch* batch, SequenceNumber seq) {
  EnsureHeader(&batch->rep_);
  EncodeFixed64(batch->rep_.data(), seq);
}

Status WriteBatchInternal::SetContents(WriteBatch* batch, const Slice& contents) {
  if (contents.size() < kHeaderSize) return Status::Corruption("malformed WriteBatch (too small)");
  batch->rep_.assign(contents.data(), contents.size());
  return Status::OK();
}

namespace {

// Checks batch whole (as InsertInto documents), then calls
// fn(seq, type, key, value) for each operation in order.
template <class Fn>
Status ForEachSequenced(const std::string& rep, uint32_t count, SequenceNumber first, Fn&& fn) {
  // The common batch, one Put or Delete, keeps its record from the checking
  // pass rather than parse it a second time: that pass was 197 of about
  // 4,680 instructions a put in fillrandom
  // (bench/results/2026-11-28-dev-single-record-batch.md).
  ValueType type = ValueType::kValue;
  Slice key;
  Slice value;
  Status s = count == 1 ? Validate(rep, count,
                                   [&](ValueType t, const Slice& k, const Slice& v) {
                                     type = t;
                                     key = k;
                                     value = v;
                                   })
                        : Validate(rep, count);
  if (!s.ok()) return s;
  if (count > 0 && (first > kMaxSequenceNumber || kMaxSequenceNumber - first < count - 1)) {
    return Status::Corruption("WriteBatch sequence out of range");
  }
  if (count == 1) {
    fn(first, type, key, value);
    return Status::OK();
  }
  SequenceNumber seq = first;
  uint32_t records = 0;
  return ForEachRecord(rep, &records,
                       [&fn, &seq](ValueType type, const Slice& key, const Slice& value) {
                         fn(seq++, type, key, value);
                       });
}

}  // namespace

Status WriteBatchInternal::InsertInto(const WriteBatch* batch, MemTable* mem) {
  return ForEachSequenced(batch->rep_, Count(batch), Sequence(batch),
                          [mem](SequenceNumber seq, ValueType type, const Slice& key,
                                const Slice& value) { mem->Add(seq, type, key, value); });
}

Status WriteBatchInternal::PrepareInto(const WriteBatch* batch, MemTable* mem,
                                       std::vector<const char*>* entries) {
  return ForEachSequenced(
      batch->rep_, Count(batch), Sequence(batch),
      [mem, entries](SequenceNumber seq, ValueType type, const Slice& key, const Slice& value) {
        entries->push_back(mem->Prepare(seq, type, key, value));
      });
}

void WriteBatchInternal::Append(WriteBatch* dst, const WriteBatch* src) {
  if (src->rep_.size() <= kHeaderSize) return;  // nothing to append
  if (dst == src) {
    const WriteBatch copy = *src;
    Append(dst, &copy);
    return;
  }
  SetCount(dst, Count(dst) + Count(src));
  dst->rep_.append(src->rep_.data() + kHeaderSize, src->rep_.size() - kHeaderSize);
}

}  // namespace accelkv
