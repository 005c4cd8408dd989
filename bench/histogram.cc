#include "histogram.h"

#include <algorithm>
#include <bit>

namespace accelkv_bench {

int Histogram::BucketFor(uint64_t value) {
  if (value < static_cast<uint64_t>(kSub)) return static_cast<int>(value);
  const int exponent = 63 - std::countl_zero(value);  // >= kSubBits
  const int sub = static_cast<int>((value >> (exponent - kSubBits)) & (kSub - 1));
  return kSub + (exponent - kSubBits) * kSub + sub;
}

uint64_t Histogram::BucketLow(int bucket) {
  if (bucket < kSub) return static_cast<uint64_t>(bucket);
  const int exponent = (bucket - kSub) / kSub + kSubBits;
  const uint64_t sub = static_cast<uint64_t>((bucket - kSub) % kSub);
  return (uint64_t{1} << exponent) + (sub << (exponent - kSubBits));
}

uint64_t Histogram::BucketHigh(int bucket) {
  if (bucket + 1 >= kNumBuckets) return UINT64_MAX;
  return BucketLow(bucket + 1) - 1;
}

void Histogram::Add(uint64_t value) {
  buckets_[BucketFor(value)]++;
  count_++;
  sum_ += value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void Histogram::Merge(const Histogram& other) {
  for (int i = 0; i < kNumBuckets; i++) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::Clear() { *this = Histogram(); }

double Histogram::Mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(sum_ / static_cast<long double>(count_));
}

double Histogram::Percentile(double p) const {
  if (count_ == 0) return 0.0;
  const double threshold = static_cast<double>(count_) * std::clamp(p, 0.0, 100.0) / 100.0;
  double cumulative = 0;
  for (int b = 0; b < kNumBuckets; b++) {
    if (buckets_[b] == 0) continue;
    const double before = cumulative;
    cumulative += static_cast<double>(buckets_[b]);
    if (cumulative >= threshold) {
      const double low = static_cast<double>(BucketLow(b));
      const double high = static_cast<double>(BucketHigh(b)) + 1.0;
      const double fraction = (threshold - before) / static_cast<double>(buckets_[b]);
      const double value = low + (high - low) * fraction;
      return std::clamp(value, static_cast<double>(min()), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

}  // namespace accelkv_bench
