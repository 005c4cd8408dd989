// Internal keys: every entry of the memtable, the WAL-replayed state and the
// tables is keyed by
//
//   internal_key = user_key ++ fixed64_le((sequence << 8) | type)
//
// ordered by user key ascending (user comparator), then by the 8-byte trailer
// descending, so the newest version of a user key comes first.
// docs/FORMAT.md ("Internal keys") is the byte-exact spec.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>

#include "accelkv/comparator.h"
#include "accelkv/slice.h"
#include "util/coding.h"

namespace accelkv {

// Embedded in on-disk data: do not renumber.
enum class ValueType : unsigned char {
  kDeletion = 0x0,
  kValue = 0x1,
};
// Seek keys use the highest type, so they sort before every entry of the same
// (user key, sequence) pair.
inline constexpr ValueType kValueTypeForSeek = ValueType::kValue;

using SequenceNumber = uint64_t;
// 56 bits: the low 8 bits of the trailer hold the type.
inline constexpr SequenceNumber kMaxSequenceNumber = (uint64_t{1} << 56) - 1;
inline constexpr size_t kInternalKeyTrailerSize = 8;

inline uint64_t PackSequenceAndType(SequenceNumber seq, ValueType t) {
  assert(seq <= kMaxSequenceNumber);
  return (seq << 8) | static_cast<uint64_t>(t);
}

struct ParsedInternalKey {
  Slice user_key;
  SequenceNumber sequence = 0;
  ValueType type = ValueType::kValue;
  ParsedInternalKey() = default;
  ParsedInternalKey(const Slice& u, SequenceNumber seq, ValueType t)
      : user_key(u), sequence(seq), type(t) {}
};

inline void AppendInternalKey(std::string* result, const ParsedInternalKey& key) {
  result->append(key.user_key.data(), key.user_key.size());
  PutFixed64(result, PackSequenceAndType(key.sequence, key.type));
}

// False if the bytes are not a well-formed internal key.
inline bool ParseInternalKey(const Slice& internal_key, ParsedInternalKey* result) {
  const size_t n = internal_key.size();
  if (n < kInternalKeyTrailerSize) return false;
  uint64_t num = DecodeFixed64(internal_key.data() + n - kInternalKeyTrailerSize);
  auto c = static_cast<unsigned char>(num & 0xff);
  result->sequence = num >> 8;
  result->type = static_cast<ValueType>(c);
  result->user_key = Slice(internal_key.data(), n - kInternalKeyTrailerSize);
  return c <= static_cast<unsigned char>(ValueType::kValue);
}

// REQUIRES: internal_key.size() >= 8
inline Slice ExtractUserKey(const Slice& internal_key) {
  assert(internal_key.size() >= kInternalKeyTrailerSize);
  return Slice(internal_key.data(), internal_key.size() - kInternalKeyTrailerSize);
}
inline uint64_t ExtractTrailer(const Slice& internal_key) {
  return DecodeFixed64(internal_key.data() + internal_key.size() - kInternalKeyTrailerSize);
}

// Orders internal keys: user key ascending, then trailer descending. A
// Comparator itself, so generic iterators (merging, two-level) can use it.
class InternalKeyComparator final : public Comparator {
 public:
  explicit InternalKeyComparator(const Comparator* c) : user_comparator_(c) {}
  const char* Name() const override { return "accelkv.InternalKeyComparator"; }
  int Compare(const Slice& a, const Slice& b) const override {
    int r = user_comparator_->Compare(ExtractUserKey(a), ExtractUserKey(b));
    if (r == 0) {
      const uint64_t anum = ExtractTrailer(a);
      const uint64_t bnum = ExtractTrailer(b);
      if (anum > bnum) {
        r = -1;
      } else if (anum < bnum) {
        r = +1;
      }
    }
    return r;
  }
  const Comparator* user_comparator() const { return user_comparator_; }

 private:
  const Comparator* user_comparator_;
};

// An owned internal key.
class InternalKey {
 public:
  InternalKey() = default;
  InternalKey(const Slice& user_key, SequenceNumber s, ValueType t) {
    AppendInternalKey(&rep_, ParsedInternalKey(user_key, s, t));
  }
  void DecodeFrom(const Slice& s) { rep_.assign(s.data(), s.size()); }
  Slice Encode() const { return rep_; }
  Slice user_key() const { return ExtractUserKey(rep_); }
  bool empty() const { return rep_.empty(); }
  void Clear() { rep_.clear(); }

 private:
  std::string rep_;
};

// A key for memtable/table lookups of user_key as of snapshot `sequence`:
// the internal key (user_key, sequence, kValueTypeForSeek).
class LookupKey {
 public:
  LookupKey(const Slice& user_key, SequenceNumber sequence) {
    AppendInternalKey(&rep_, ParsedInternalKey(user_key, sequence, kValueTypeForSeek));
  }
  Slice internal_key() const { return rep_; }
  Slice user_key() const { return ExtractUserKey(rep_); }

 private:
  std::string rep_;
};

}  // namespace accelkv
