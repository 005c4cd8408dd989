#include "wal/log_writer.h"

#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"

namespace accelkv::log {

namespace {
// Fragments up to this size are copied next to their header and written with
// one Append; the copy costs less than a second virtual call + buffer check.
constexpr size_t kSingleAppendLimit = 4096;
}  // namespace

Writer::Writer(WritableFile* dest) : Writer(dest, 0) {}

Writer::Writer(WritableFile* dest, uint64_t dest_length)
    : dest_(dest), block_offset_(dest_length % kBlockSize) {
  for (int i = 0; i <= kMaxRecordType; i++) {
    const char t = static_cast<char>(i);
    type_crc_[i] = crc32c::Value(&t, 1);
  }
  buf_.reserve(kHeaderSize + kSingleAppendLimit);
}

Status Writer::AddRecord(const Slice& slice) {
  const char* ptr = slice.data();
  size_t left = slice.size();

  // Fast path: the whole record fits in the current block.
  if (kHeaderSize + left <= kBlockSize - block_offset_) {
    return EmitPhysicalRecord(kFullType, ptr, left);
  }

  // Fragment the record; an empty record still emits one (FULL) fragment.
  Status s;
  bool begin = true;
  do {
    const size_t leftover = kBlockSize - block_offset_;
    if (leftover < kHeaderSize) {
      // Too small for a header: pad the block's tail with zeros.
      if (leftover > 0) {
        static constexpr char kZeros[kHeaderSize] = {};
        s = dest_->Append(Slice(kZeros, leftover));
        if (!s.ok()) return s;
      }
      block_offset_ = 0;
    }
    const size_t avail = kBlockSize - block_offset_ - kHeaderSize;
    const size_t fragment_length = left < avail ? left : avail;
    const bool end = (left == fragment_length);
    RecordType type;
    if (begin && end) {
      type = kFullType;
    } else if (begin) {
      type = kFirstType;
    } else if (end) {
      type = kLastType;
    } else {
      type = kMiddleType;
    }
    s = EmitPhysicalRecord(type, ptr, fragment_length);
    ptr += fragment_length;
    left -= fragment_length;
    begin = false;
  } while (s.ok() && left > 0);
  return s;
}

Status Writer::EmitPhysicalRecord(RecordType type, const char* ptr, size_t length) {
  // REQUIRES: the fragment fits in the current block.
  char header[kHeaderSize];
  header[4] = static_cast<char>(length & 0xff);
  header[5] = static_cast<char>(length >> 8);
  header[6] = static_cast<char>(type);
  const uint32_t crc = crc32c::Extend(type_crc_[type], ptr, length);
  EncodeFixed32(header, crc32c::Mask(crc));

  Status s;
  if (length <= kSingleAppendLimit) {
    buf_.assign(header, kHeaderSize);
    buf_.append(ptr, length);
    s = dest_->Append(buf_);
  } else {
    s = dest_->Append(Slice(header, kHeaderSize));
    if (s.ok()) s = dest_->Append(Slice(ptr, length));
  }
  block_offset_ += kHeaderSize + length;
  return s;
}

}  // namespace accelkv::log
