#include "distributions.h"

#include <algorithm>
#include <cmath>

namespace accelkv_bench {

uint64_t YcsbFnvHash64(uint64_t val) {
  constexpr uint64_t kOffsetBasis = 0xCBF29CE484222325ull;
  constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t hash = kOffsetBasis;
  for (int i = 0; i < 8; i++) {
    hash ^= val & 0xff;
    val >>= 8;
    hash *= kPrime;
  }
  const int64_t signed_hash = static_cast<int64_t>(hash);
  // Math.abs(Long.MIN_VALUE) stays negative in Java; its bit pattern is kept.
  if (signed_hash < 0 && signed_hash != INT64_MIN) return static_cast<uint64_t>(-signed_hash);
  return hash;
}

ZipfianGenerator::ZipfianGenerator(uint64_t min, uint64_t max, double theta)
    : ZipfianGenerator(min, max, theta, Zeta(max - min + 1, theta)) {}

ZipfianGenerator::ZipfianGenerator(uint64_t min, uint64_t max, double theta, double zetan)
    : base_(min),
      items_(max - min + 1),
      theta_(theta),
      zeta2theta_(Zeta(2, theta)),
      alpha_(1.0 / (1.0 - theta)),
      zetan_(zetan),
      eta_(0),
      count_for_zeta_(max - min + 1),
      half_pow_theta_(std::pow(0.5, theta)) {
  ComputeEta(items_);
}

double ZipfianGenerator::ZetaFrom(uint64_t st, uint64_t n, double theta, double initial_sum) {
  double sum = initial_sum;
  for (uint64_t i = st; i < n; i++) sum += 1.0 / std::pow(static_cast<double>(i + 1), theta);
  return sum;
}

void ZipfianGenerator::ComputeEta(uint64_t item_count) {
  eta_ = (1.0 - std::pow(2.0 / static_cast<double>(item_count), 1.0 - theta_)) /
         (1.0 - zeta2theta_ / zetan_);
}

uint64_t ZipfianGenerator::Next(Rng* rng, uint64_t item_count) {
  if (item_count > count_for_zeta_) {
    zetan_ = ZetaFrom(count_for_zeta_, item_count, theta_, zetan_);
    count_for_zeta_ = item_count;
    ComputeEta(item_count);
  }
  const double u = rng->NextDouble();
  const double uz = u * zetan_;
  if (uz < 1.0) return base_;
  if (uz < 1.0 + half_pow_theta_) return base_ + std::min<uint64_t>(1, item_count - 1);
  const double scaled = static_cast<double>(item_count) * std::pow(eta_ * u - eta_ + 1.0, alpha_);
  const uint64_t offset = static_cast<uint64_t>(scaled);
  return base_ + std::min(offset, item_count - 1);
}

ScrambledZipfianGenerator::ScrambledZipfianGenerator(uint64_t min, uint64_t max)
    : min_(min), item_count_(max - min + 1), gen_(0, kItemCount, kZipfianConstant, kZetan) {}

uint64_t ScrambledZipfianGenerator::Next(Rng* rng) {
  return min_ + YcsbFnvHash64(gen_.Next(rng)) % item_count_;
}

LatestGenerator::LatestGenerator(uint64_t initial_count)
    : zipf_(0, std::max<uint64_t>(initial_count, 1) - 1) {}

uint64_t LatestGenerator::Next(Rng* rng, uint64_t count) {
  return count - 1 - zipf_.Next(rng, count);
}

}  // namespace accelkv_bench
