// The YCSB distributions: frequencies match their definitions.
#ifdef ACCELKV_BENCH_TESTLIB

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "distributions.h"
#include "rng.h"
#include "testutil/test_util.h"

namespace accelkv_bench {
namespace {

constexpr int kSamples = 1000000;

TEST(Zeta, MatchesTheSumAndExtendsIncrementally) {
  double direct = 0;
  for (int i = 1; i <= 1000; i++) direct += 1.0 / std::pow(i, 0.99);
  EXPECT_NEAR(ZipfianGenerator::Zeta(1000, 0.99), direct, 1e-9);
  const double half = ZipfianGenerator::Zeta(400, 0.99);
  EXPECT_NEAR(ZipfianGenerator::ZetaFrom(400, 1000, 0.99, half), direct, 1e-9);
}

TEST(Zipfian, RankFrequenciesFollowTheDefinition) {
  const uint64_t n = 1000;
  ZipfianGenerator zipf(0, n - 1);
  Rng rng(accelkv::test::TestSeed());
  std::vector<double> freq(n, 0);
  for (int i = 0; i < kSamples; i++) {
    const uint64_t v = zipf.Next(&rng);
    ASSERT_LT(v, n);
    freq[v] += 1.0 / kSamples;
  }
  const double zetan = ZipfianGenerator::Zeta(n, 0.99);
  auto expected = [&](uint64_t rank) { return 1.0 / std::pow(rank + 1.0, 0.99) / zetan; };
  // Ranks 0 and 1 are exact in Gray et al.'s generator.
  EXPECT_NEAR(freq[0], expected(0), 0.005);
  EXPECT_NEAR(freq[1], expected(1), 0.004);
  // Deeper ranks follow the closed-form approximation: within 25% for the
  // next few and in aggregate for the head and the tail.
  for (uint64_t r = 2; r < 10; r++) {
    EXPECT_NEAR(freq[r] / expected(r), 1.0, 0.25) << "rank " << r;
  }
  double head = 0, expected_head = 0;
  for (uint64_t r = 0; r < 100; r++) {
    head += freq[r];
    expected_head += expected(r);
  }
  EXPECT_NEAR(head, expected_head, 0.02);
  // Monotone on average: decile masses shrink.
  double previous = 1.0;
  for (uint64_t d = 0; d < 10; d++) {
    double mass = 0;
    for (uint64_t r = d * 100; r < (d + 1) * 100; r++) mass += freq[r];
    EXPECT_LT(mass, previous);
    previous = mass;
  }
}

TEST(Zipfian, GrowingItemCountStaysInRange) {
  ZipfianGenerator zipf(0, 99);
  Rng rng(accelkv::test::TestSeed());
  for (uint64_t count = 100; count < 5000; count += 37) {
    for (int i = 0; i < 50; i++) ASSERT_LT(zipf.Next(&rng, count), count);
  }
  // After growth the first item keeps probability 1/zeta(count).
  const uint64_t count = 5000;
  int zeros = 0;
  for (int i = 0; i < kSamples; i++) zeros += zipf.Next(&rng, count) == 0 ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(zeros) / kSamples, 1.0 / ZipfianGenerator::Zeta(count, 0.99),
              0.005);
}

TEST(ScrambledZipfian, HotItemsHaveZipfianMassSpreadOverTheRange) {
  const uint64_t n = 10000;
  ScrambledZipfianGenerator gen(0, n - 1);
  Rng rng(accelkv::test::TestSeed());
  std::vector<double> freq(n, 0);
  for (int i = 0; i < kSamples; i++) {
    const uint64_t v = gen.Next(&rng);
    ASSERT_LT(v, n);
    freq[v] += 1.0 / kSamples;
  }
  // The most popular item is item 0 of a zipfian over 10^10 items, hashed:
  // probability 1/zeta(10^10, 0.99).
  const uint64_t hottest = YcsbFnvHash64(0) % n;
  EXPECT_EQ(std::max_element(freq.begin(), freq.end()) - freq.begin(),
            static_cast<ptrdiff_t>(hottest));
  EXPECT_NEAR(freq[hottest], 1.0 / ScrambledZipfianGenerator::kZetan, 0.004);
  // Scrambling spreads the hot items: the hottest 1% of items are not
  // clustered at the low end of the range.
  std::vector<uint64_t> order(n);
  for (uint64_t i = 0; i < n; i++) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) { return freq[a] > freq[b]; });
  uint64_t in_low_half = 0;
  for (uint64_t i = 0; i < n / 100; i++) in_low_half += order[i] < n / 2 ? 1 : 0;
  EXPECT_GT(in_low_half, n / 100 / 4);
  EXPECT_LT(in_low_half, n / 100 * 3 / 4);
  // Still skewed: the zipfian's first n/100 ranks land on at most n/100
  // items, so the hottest 1% of items hold at least their mass (~19%, far
  // more than 1%).
  double top = 0;
  for (uint64_t i = 0; i < n / 100; i++) top += freq[order[i]];
  EXPECT_GT(top, 0.97 * ZipfianGenerator::Zeta(n / 100, 0.99) / ScrambledZipfianGenerator::kZetan);
}

TEST(Latest, NewestItemsAreTheMostPopular) {
  const uint64_t count = 1000;
  LatestGenerator gen(count);
  Rng rng(accelkv::test::TestSeed());
  std::vector<double> freq(count, 0);
  for (int i = 0; i < kSamples; i++) {
    const uint64_t v = gen.Next(&rng, count);
    ASSERT_LT(v, count);
    freq[v] += 1.0 / kSamples;
  }
  const double zetan = ZipfianGenerator::Zeta(count, 0.99);
  EXPECT_NEAR(freq[count - 1], 1.0 / zetan, 0.005);
  EXPECT_NEAR(freq[count - 2], std::pow(0.5, 0.99) / zetan, 0.004);
  EXPECT_GT(freq[count - 1], 10 * freq[0]);
  // As records are inserted the newest one takes over.
  int newest = 0;
  for (int i = 0; i < 100000; i++) newest += gen.Next(&rng, count + 500) == count + 499 ? 1 : 0;
  EXPECT_NEAR(newest / 100000.0, 1.0 / ZipfianGenerator::Zeta(count + 500, 0.99), 0.01);
}

TEST(Uniform, EveryBucketGetsItsShare) {
  const uint64_t n = 100;
  UniformChooser uniform(n);
  Rng rng(accelkv::test::TestSeed());
  std::vector<int> counts(n, 0);
  for (int i = 0; i < kSamples; i++) counts[uniform.Next(&rng)]++;
  // Chi-square with 99 degrees of freedom: 99.9th percentile is about 149.
  double chi2 = 0;
  const double expected = static_cast<double>(kSamples) / n;
  for (int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 149.0);
}

TEST(Rng, DoublesAreInTheUnitIntervalAndSeedsReplay) {
  Rng a(5), b(5), c(6);
  bool differs = false;
  for (int i = 0; i < 10000; i++) {
    const double d = a.NextDouble();
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
    const double e = b.NextDouble();
    ASSERT_EQ(d, e);
    differs |= c.NextDouble() != d;
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace accelkv_bench

#endif  // ACCELKV_BENCH_TESTLIB
