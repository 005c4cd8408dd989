// Rng: the bench's seedable pseudo-random generator (xoshiro256**, seeded
// through splitmix64). Deterministic for a seed, fast, not cryptographic.
//
// Thread safety: none; every worker thread owns its own Rng (seeded from the
// run seed and the thread's index, so runs replay).
#pragma once

#include <cstdint>

namespace accelkv_bench {

// splitmix64's finalizer: a good 64-bit mixer.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// splitmix64 step: also a good 64-bit mixer for seeds.
inline uint64_t SplitMix64(uint64_t* state) { return Mix64(*state += 0x9e3779b97f4a7c15ull); }

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t sm = seed;
    for (uint64_t& word : s_) word = SplitMix64(&sm);
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1), 53 bits of precision.
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n). REQUIRES: n > 0. (Lemire's multiply-shift; bias < n/2^64.)
  uint64_t Uniform(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace accelkv_bench
