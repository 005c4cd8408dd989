// The bloom filter's probe sequence (docs/FORMAT.md, "Filter block"): which
// bits of a filter a key's hash sets or tests. One definition for the table
// code (table/filter.cc: FilterBuilder, FilterReader) and the GPU encoder's
// filter kernel (src/gpu/encode_common.h), so the device builds filters
// byte-identical to FilterBuilder's.
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

inline constexpr uint32_t kBloomLineBytesOf512 = 64;

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
  const uint64_t base = ((uint64_t{h1} * num_lines) >> 32) * kBloomLineBytesOf512;
  for (int j = 0; j < num_probes; ++j) {
    const uint32_t bit = h2 >> 23;
    if (!visit(base + (bit >> 3), static_cast<uint8_t>(1u << (bit & 7)))) return false;
    h2 *= 0x9E3779B9u;
  }
  return true;
}

}  // namespace accelkv
