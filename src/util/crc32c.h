// CRC32C (Castagnoli polynomial 0x1EDC6F41, reflected, init/xorout 0xFFFFFFFF),
// the checksum of every WAL record, table block and MANIFEST record.
//
// Debian 12 ships no CRC32C library (google/crc32c is not packaged), so this is
// hand-written: SSE4.2's crc32 instruction when the CPU has it (~8 B/cycle),
// else a byte-wise table. The GPU implementation must match Value() bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace accelkv::crc32c {

// CRC32C of concat(A, data[0,n-1]) where init_crc is the CRC32C of A.
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// Stored CRCs are masked so that the CRC of a string holding embedded CRCs is
// not degenerate (as in LevelDB): rotate right by 15 and add a constant.
inline constexpr uint32_t kMaskDelta = 0xa282ead8ul;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked_crc) {
  uint32_t rot = masked_crc - kMaskDelta;
  return ((rot >> 17) | (rot << 15));
}

}  // namespace accelkv::crc32c
