// Key-choosing distributions with YCSB's own definitions
// (site.ycsb.generator.*), so "ycsb-a" here draws keys as YCSB does.
//
//   UniformChooser            uniform over [0, n)
//   ZipfianGenerator          Gray et al. "Quickly generating billion-record
//                             synthetic databases" (YCSB ZipfianGenerator):
//                             item i (0-based) has probability
//                             (1/(i+1)^theta) / zeta(n, theta); rank 0 and 1
//                             are exact, deeper ranks follow the closed-form
//                             approximation. zeta grows incrementally when
//                             the item count grows (inserts).
//   ScrambledZipfianGenerator zipfian over 10^10 items (YCSB's precomputed
//                             zeta 26.46902820178302 for theta 0.99), hashed
//                             with FNV-1a 64 and taken modulo the item count,
//                             so popular items are spread over the key space.
//   LatestGenerator           YCSB SkewedLatestGenerator: the newest item is
//                             the most popular: count-1 - zipfian(count).
//
// Thread safety: none; each worker thread owns its generators.
#pragma once

#include <cstdint>

#include "rng.h"

namespace accelkv_bench {

inline constexpr double kZipfianConstant = 0.99;

// YCSB's Utils.fnvhash64: FNV-1a over the 8 little-endian bytes of val, made
// non-negative as Java's Math.abs on a long does.
uint64_t YcsbFnvHash64(uint64_t val);

class UniformChooser {
 public:
  explicit UniformChooser(uint64_t n) : n_(n) {}
  uint64_t Next(Rng* rng) const { return rng->Uniform(n_); }

 private:
  uint64_t n_;
};

class ZipfianGenerator {
 public:
  // Items [min, max] (inclusive, as in YCSB). Computes zeta(n, theta): O(n).
  ZipfianGenerator(uint64_t min, uint64_t max, double theta = kZipfianConstant);
  // Same with zeta(n, theta) given (YCSB passes precomputed constants).
  ZipfianGenerator(uint64_t min, uint64_t max, double theta, double zetan);

  // A value in [min, min + items).
  uint64_t Next(Rng* rng) { return Next(rng, items_); }
  // A value in [min, min + item_count); item_count may grow between calls
  // (zeta is extended incrementally; it never shrinks).
  uint64_t Next(Rng* rng, uint64_t item_count);

  // sum_{i=1..n} 1/i^theta
  static double Zeta(uint64_t n, double theta) { return ZetaFrom(0, n, theta, 0.0); }
  // initial_sum + sum_{i=st+1..n} 1/i^theta
  static double ZetaFrom(uint64_t st, uint64_t n, double theta, double initial_sum);

  double zetan() const { return zetan_; }

 private:
  void ComputeEta(uint64_t item_count);

  uint64_t base_;
  uint64_t items_;
  double theta_;
  double zeta2theta_;
  double alpha_;
  double zetan_;
  double eta_;
  uint64_t count_for_zeta_;
  double half_pow_theta_;
};

class ScrambledZipfianGenerator {
 public:
  static constexpr uint64_t kItemCount = 10000000000ull;
  static constexpr double kZetan = 26.46902820178302;

  // Items [min, max] (inclusive).
  ScrambledZipfianGenerator(uint64_t min, uint64_t max);
  uint64_t Next(Rng* rng);

 private:
  uint64_t min_;
  uint64_t item_count_;
  ZipfianGenerator gen_;
};

class LatestGenerator {
 public:
  // Initial item count (>= 1); Next takes the current count.
  explicit LatestGenerator(uint64_t initial_count);
  // A value in [0, count), count-1 the most likely. REQUIRES: count >= 1.
  uint64_t Next(Rng* rng, uint64_t count);

 private:
  ZipfianGenerator zipf_;
};

}  // namespace accelkv_bench
