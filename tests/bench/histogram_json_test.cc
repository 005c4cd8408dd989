// Histogram percentiles and merging; JSON line writer.
#ifdef ACCELKV_BENCH_TESTLIB

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "histogram.h"
#include "json_writer.h"
#include "rng.h"
#include "testutil/test_util.h"

namespace accelkv_bench {
namespace {

TEST(Histogram, BucketsTileTheRangeAndStaySmall) {
  for (int b = 0; b + 1 < Histogram::kNumBuckets; b++) {
    ASSERT_EQ(Histogram::BucketHigh(b) + 1, Histogram::BucketLow(b + 1)) << b;
    ASSERT_EQ(Histogram::BucketFor(Histogram::BucketLow(b)), b);
    ASSERT_EQ(Histogram::BucketFor(Histogram::BucketHigh(b)), b);
    const double low = static_cast<double>(Histogram::BucketLow(b));
    const double width = static_cast<double>(Histogram::BucketHigh(b)) - low + 1;
    if (low >= 16) {
      ASSERT_LE(width / low, 1.0 / 16 + 1e-12) << b;
    }
  }
  EXPECT_EQ(Histogram::BucketFor(std::numeric_limits<uint64_t>::max()), Histogram::kNumBuckets - 1);
}

TEST(Histogram, PercentilesOfAUniformSample) {
  Histogram h;
  for (uint64_t v = 1; v <= 100000; v++) h.Add(v);
  EXPECT_EQ(h.count(), 100000u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100000u);
  EXPECT_NEAR(h.Mean(), 50000.5, 1e-6);
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9}) {
    EXPECT_NEAR(h.Percentile(p) / (p * 1000.0), 1.0, 0.065) << "p" << p;
  }
  EXPECT_DOUBLE_EQ(h.Percentile(100), 100000.0);
}

TEST(Histogram, PercentilesOfASkewedSampleAreWithinBucketError) {
  Rng rng(accelkv::test::TestSeed());
  std::vector<uint64_t> samples;
  Histogram h;
  for (int i = 0; i < 200000; i++) {
    // log-uniform between 100 ns and ~10 ms
    const uint64_t v = static_cast<uint64_t>(100.0 * std::pow(10.0, 5.0 * rng.NextDouble()));
    samples.push_back(v);
    h.Add(v);
  }
  std::sort(samples.begin(), samples.end());
  for (double p : {50.0, 99.0, 99.9}) {
    const double exact =
        static_cast<double>(samples[static_cast<size_t>(p / 100 * samples.size()) - 1]);
    EXPECT_NEAR(h.Percentile(p) / exact, 1.0, 0.07) << "p" << p;
  }
}

TEST(Histogram, MergeEqualsAddingEverythingToOne) {
  Histogram a, b, all;
  for (uint64_t v = 0; v < 5000; v++) {
    (v % 3 == 0 ? a : b).Add(v * 7);
    all.Add(v * 7);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.Mean(), all.Mean());
  for (double p : {50.0, 99.0, 99.9}) EXPECT_DOUBLE_EQ(a.Percentile(p), all.Percentile(p));
  Histogram empty;
  EXPECT_EQ(empty.Percentile(99), 0.0);
  EXPECT_EQ(empty.Mean(), 0.0);
  a.Merge(empty);
  EXPECT_EQ(a.count(), all.count());
}

TEST(JsonLine, WritesTypedFieldsInOrder) {
  JsonLine j;
  j.Add("engine", "rocksdb").Add("ops", uint64_t{42}).Add("neg", int64_t{-3}).Add("ok", true);
  j.Add("rate", 2.5).AddNull("none");
  EXPECT_EQ(j.str(), R"({"engine":"rocksdb","ops":42,"neg":-3,"ok":true,"rate":2.5,"none":null})");
  EXPECT_EQ(JsonLine().str(), "{}");
}

TEST(JsonLine, EscapesStringsAndRejectsNonFiniteNumbers) {
  JsonLine j;
  j.Add("s", std::string_view("a\"b\\c\nd\te\x01\x1f", 11));
  j.Add("nan", std::numeric_limits<double>::quiet_NaN());
  j.Add("inf", std::numeric_limits<double>::infinity());
  j.Add("k\"ey", 1);
  EXPECT_EQ(j.str(), R"({"s":"a\"b\\c\nd\te\u0001\u001f","nan":null,"inf":null,"k\"ey":1})");
}

TEST(JsonLine, LargeAndSmallNumbersStayNumbers) {
  JsonLine j;
  j.Add("big", 123456789012.0)
      .Add("small", 0.000125)
      .Add("max", std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(j.str(), R"({"big":123456789012,"small":0.000125,"max":18446744073709551615})");
}

}  // namespace
}  // namespace accelkv_bench

#endif  // ACCELKV_BENCH_TESTLIB
