// Histogram: latency samples in log-spaced buckets (16 per power of two, so a
// reported percentile is within ~6% of the true sample), mergeable across
// threads. Values are nanoseconds; exact count, sum, min and max are kept.
//
// Thread safety: none; each worker thread records into its own Histogram and
// the runner merges them after the threads joined.
#pragma once

#include <array>
#include <cstdint>

namespace accelkv_bench {

class Histogram {
 public:
  static constexpr int kSubBits = 4;
  static constexpr int kSub = 1 << kSubBits;
  // Values < kSub get one bucket each; then kSub buckets per power of two.
  static constexpr int kNumBuckets = kSub + (64 - kSubBits) * kSub;

  void Add(uint64_t value);
  void Merge(const Histogram& other);
  void Clear();

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double Mean() const;
  // The p-th percentile (0 < p <= 100), interpolated linearly inside its
  // bucket and clamped to [min, max]; 0 when empty.
  double Percentile(double p) const;

  // Bucket helpers (exposed for tests).
  static int BucketFor(uint64_t value);
  static uint64_t BucketLow(int bucket);   // smallest value in the bucket
  static uint64_t BucketHigh(int bucket);  // largest value in the bucket

 private:
  std::array<uint64_t, kNumBuckets> buckets_{};
  uint64_t count_ = 0;
  long double sum_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace accelkv_bench
