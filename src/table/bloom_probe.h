// The bloom filter's geometry and probe sequence (docs/FORMAT.md, "Filter
// block"): its lines, its size, and which bits a key's hash sets or tests.
// One definition for the table code (table/filter.h: FilterBuilder,
// FilterReader) and the GPU encoder's filter kernels (src/gpu/encode_common.h),
// so the device builds filters byte-identical to FilterBuilder's.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ACCELKV_BLOOM_HD __host__ __device__
#else
#define ACCELKV_BLOOM_HD
#endif

namespace accelkv {

// A filter line: 512 bits.
inline constexpr uint32_t kBloomLineBits = 512;
inline constexpr uint32_t kBloomLineBytes = kBloomLineBits / 8;

// max(1, ceil(num_keys * bits_per_key / 512)). Inline: planners ask for the
// filter's size after every key.
ACCELKV_BLOOM_HD inline uint64_t BloomNumLines(uint64_t num_keys, int bits_per_key) {
  const uint64_t bits = num_keys * static_cast<uint64_t>(bits_per_key);
  const uint64_t lines = (bits + kBloomLineBits - 1) / kBloomLineBits;
  return lines > 0 ? lines : 1;
}

// The filter's contents for num_lines lines: the lines, num_probes (1 byte),
// num_lines (fixed32).
ACCELKV_BLOOM_HD inline uint64_t BloomFilterSize(uint64_t num_lines) {
  return num_lines * kBloomLineBytes + 5;
}

// Calls visit(byte, mask) for each of the num_probes bits hash h selects in
// a filter of num_lines 512-bit lines: byte is the bit's byte offset from
// the filter's start, mask the bit within that byte. The line is
// (low 32 bits of h * num_lines) >> 32; the probes are the top 9 bits of
// h2 = high 32 bits of h, h2 *= 0x9E3779B9 after each. Stops at the first
// probe for which visit returns false and returns false; else true.
template <typename Visit>
ACCELKV_BLOOM_HD inline bool BloomProbes(uint64_t h, uint32_t num_lines, int num_probes,
                                         Visit&& visit) {
  const uint32_t h1 = static_cast<uint32_t>(h);
  uint32_t h2 = static_cast<uint32_t>(h >> 32);
  const uint64_t base = ((uint64_t{h1} * num_lines) >> 32) * kBloomLineBytes;
  for (int j = 0; j < num_probes; ++j) {
    const uint32_t bit = h2 >> 23;
    if (!visit(base + (bit >> 3), static_cast<uint8_t>(1u << (bit & 7)))) return false;
    h2 *= 0x9E3779B9u;
  }
  return true;
}

}  // namespace accelkv
