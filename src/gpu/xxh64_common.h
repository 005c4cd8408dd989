// XXH64 with seed 0 for the host and the device: the bloom-filter hash of
// docs/FORMAT.md ("Filter block"; util/hash.h's Hash64 is libxxhash's
// XXH64), restated here because the GPU encoder hashes every output user key
// into its table's filter (encode_common.h, FilterKeyHash). The algorithm is XXH64 as specified in
// xxHash's doc/xxhash_spec.md; tests/gpu/gpu_plan_test.cc checks it against Hash64.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "gpu/key_sort_common.h"

namespace accelkv {
namespace gpu {

inline constexpr uint64_t kXxhPrime1 = 11400714785074694791ull;
inline constexpr uint64_t kXxhPrime2 = 14029467366897019727ull;
inline constexpr uint64_t kXxhPrime3 = 1609587929392839161ull;
inline constexpr uint64_t kXxhPrime4 = 9650029242287828579ull;
inline constexpr uint64_t kXxhPrime5 = 2870177450012600261ull;

ACCELKV_HD inline uint64_t XxhRotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

ACCELKV_HD inline uint64_t XxhRound(uint64_t acc, uint64_t input) {
  acc += input * kXxhPrime2;
  acc = XxhRotl(acc, 31);
  return acc * kXxhPrime1;
}

ACCELKV_HD inline uint64_t XxhMergeRound(uint64_t acc, uint64_t val) {
  acc ^= XxhRound(0, val);
  return acc * kXxhPrime1 + kXxhPrime4;
}

// XXH64(p, n, 0).
ACCELKV_HD inline uint64_t Xxh64(const uint8_t* p, uint64_t n) {
  const uint8_t* const end = p + n;
  uint64_t h;
  if (n >= 32) {
    uint64_t v1 = kXxhPrime1 + kXxhPrime2;
    uint64_t v2 = kXxhPrime2;
    uint64_t v3 = 0;
    uint64_t v4 = 0 - kXxhPrime1;
    const uint8_t* const limit = end - 32;
    do {
      v1 = XxhRound(v1, LoadFixed64(p));
      v2 = XxhRound(v2, LoadFixed64(p + 8));
      v3 = XxhRound(v3, LoadFixed64(p + 16));
      v4 = XxhRound(v4, LoadFixed64(p + 24));
      p += 32;
    } while (p <= limit);
    h = XxhRotl(v1, 1) + XxhRotl(v2, 7) + XxhRotl(v3, 12) + XxhRotl(v4, 18);
    h = XxhMergeRound(h, v1);
    h = XxhMergeRound(h, v2);
    h = XxhMergeRound(h, v3);
    h = XxhMergeRound(h, v4);
  } else {
    h = kXxhPrime5;
  }
  h += n;
  while (end - p >= 8) {
    h ^= XxhRound(0, LoadFixed64(p));
    h = XxhRotl(h, 27) * kXxhPrime1 + kXxhPrime4;
    p += 8;
  }
  if (end - p >= 4) {
    h ^= uint64_t{LoadFixed32(p)} * kXxhPrime1;
    h = XxhRotl(h, 23) * kXxhPrime2 + kXxhPrime3;
    p += 4;
  }
  while (p < end) {
    h ^= uint64_t{*p} * kXxhPrime5;
    h = XxhRotl(h, 11) * kXxhPrime1;
    ++p;
  }
  h ^= h >> 33;
  h *= kXxhPrime2;
  h ^= h >> 29;
  h *= kXxhPrime3;
  h ^= h >> 32;
  return h;
}

}  // namespace gpu
}  // namespace accelkv
