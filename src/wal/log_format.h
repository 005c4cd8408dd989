// WAL physical format (docs/format/wal.md), shared by the WAL and the
// MANIFEST: the file is a sequence of 32 KiB blocks; each block holds
// physical records
//
//   masked_crc32c: fixed32   CRC32C of (type byte ++ payload), crc32c::Mask()ed
//   length:        fixed16   payload bytes (little endian)
//   type:          uint8     RecordType below
//   payload:       length bytes
//
// A record never crosses a block boundary: a logical record too large for
// the rest of its block is split into FIRST, MIDDLE..., LAST fragments. A
// block tail shorter than the 7-byte header is filled with zero bytes.
//
// Thread safety: constants only.
#pragma once

#include <cstddef>

namespace accelkv::log {

// Embedded in on-disk data: do not renumber.
enum RecordType : unsigned char {
  // Padding / preallocated space; never written as a record by Writer.
  kZeroType = 0,
  kFullType = 1,
  // Fragments of a logical record that spans blocks.
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
};
inline constexpr int kMaxRecordType = kLastType;

inline constexpr size_t kBlockSize = 32768;

// crc (4) + length (2) + type (1)
inline constexpr size_t kHeaderSize = 4 + 2 + 1;

}  // namespace accelkv::log
