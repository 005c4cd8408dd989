#include <string>

#include <gtest/gtest.h>

#include "table/filter.h"
#include "table/table_test_util.h"
#include "util/coding.h"
#include "util/hash.h"

namespace accelkv {
namespace {

std::string Key(int i) {
  std::string k;
  PutFixed32(&k, static_cast<uint32_t>(i));
  return "user" + k;
}

TEST(FilterTest, ParameterFormulas) {
  EXPECT_EQ(1, BloomNumProbes(1));  // floor(0.69) = 0 -> clamped to 1
  EXPECT_EQ(1, BloomNumProbes(2));
  EXPECT_EQ(2, BloomNumProbes(3));
  EXPECT_EQ(6, BloomNumProbes(10));
  EXPECT_EQ(11, BloomNumProbes(17));
  EXPECT_EQ(12, BloomNumProbes(18));
  EXPECT_EQ(12, BloomNumProbes(100));
  EXPECT_EQ(1u, BloomNumLines(0, 10));
  EXPECT_EQ(1u, BloomNumLines(51, 10));  // 510 bits
  EXPECT_EQ(1u, BloomNumLines(512, 1));  // 512 bits
  EXPECT_EQ(2u, BloomNumLines(52, 10));  // 520 bits
  EXPECT_EQ(196u, BloomNumLines(10000, 10));
}

// The bytes of a one-key filter, computed from the spec independently of
// FilterBuilder: line = (h1 * 1) >> 32 = 0; bits from h2 >> 23, h2 *= 0x9E3779B9.
TEST(FilterTest, OneKeyFilterBytesFollowTheSpec) {
  FilterBuilder fb(10);
  fb.AddKey("hello");
  fb.AddKey("hello");  // consecutive duplicate: added once
  EXPECT_EQ(1u, fb.NumKeys());
  std::string got;
  fb.Finish(&got);
  ASSERT_EQ(64u + 5u, got.size());
  EXPECT_EQ(fb.EncodedSize(), got.size());

  std::string want(64, '\0');
  const uint64_t h = Hash64("hello", 5);
  uint32_t h2 = static_cast<uint32_t>(h >> 32);
  for (int j = 0; j < 6; ++j) {
    const uint32_t bit = h2 >> 23;
    want[bit / 8] = static_cast<char>(want[bit / 8] | (1 << (bit % 8)));
    h2 = h2 * 0x9E3779B9u;
  }
  want.push_back(6);
  PutFixed32(&want, 1);
  EXPECT_EQ(want, got);
}

TEST(FilterTest, NoFalseNegativesAndAboutOnePercentFalsePositives) {
  constexpr int kKeys = 10000;
  FilterBuilder fb(10);
  for (int i = 0; i < kKeys; ++i) fb.AddKey(Key(i));
  std::string contents;
  fb.Finish(&contents);
  ASSERT_TRUE(FilterReader::Validate(contents).ok());
  FilterReader reader(contents);
  for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(reader.KeyMayMatch(Key(i))) << i;
  int fp = 0;
  constexpr int kProbes = 100000;
  for (int i = 0; i < kProbes; ++i) fp += reader.KeyMayMatch(Key(kKeys + 1000000 + i));
  const double rate = static_cast<double>(fp) / kProbes;
  std::fprintf(stderr, "bloom false positive rate at 10 bits/key: %.4f\n", rate);
  EXPECT_LT(rate, 0.02);
  EXPECT_GT(rate, 0.002);  // a filter that rejects everything would be wrong
}

TEST(FilterTest, MalformedFilterMatchesEverything) {
  FilterBuilder fb(10);
  fb.AddKey("a");
  std::string good;
  fb.Finish(&good);
  FilterReader ok_reader(good);
  EXPECT_FALSE(ok_reader.KeyMayMatch("definitely-not-there-1"));  // 6 probes in 512 bits

  std::vector<std::string> bad = {"", "abcd", good.substr(0, good.size() - 1)};
  std::string zero_lines = good;
  EncodeFixed32(zero_lines.data() + zero_lines.size() - 4, 0);
  bad.push_back(zero_lines);
  std::string many_lines = good;
  EncodeFixed32(many_lines.data() + many_lines.size() - 4, 2);
  bad.push_back(many_lines);
  std::string zero_probes = good;
  zero_probes[zero_probes.size() - 5] = 0;
  bad.push_back(zero_probes);
  std::string many_probes = good;
  many_probes[many_probes.size() - 5] = 13;
  bad.push_back(many_probes);
  for (const std::string& b : bad) {
    EXPECT_TRUE(FilterReader::Validate(b).IsCorruption());
    FilterReader reader(b);
    EXPECT_TRUE(reader.KeyMayMatch("definitely-not-there-1"));
  }
}

}  // namespace
}  // namespace accelkv
