#include "util/coding.h"

#include <gtest/gtest.h>

#include "util/crc32c.h"
#include "util/hash.h"
#include "util/internal_key.h"

namespace accelkv {
namespace {

TEST(Coding, Fixed) {
  std::string s;
  for (uint32_t v = 0; v < 100000; v++) PutFixed32(&s, v);
  Slice in(s);
  for (uint32_t v = 0; v < 100000; v++) {
    uint32_t got;
    ASSERT_TRUE(GetFixed32(&in, &got));
    ASSERT_EQ(v, got);
  }
  uint32_t x;
  EXPECT_FALSE(GetFixed32(&in, &x));
}

TEST(Coding, Varint64RoundTripAndTruncation) {
  std::vector<uint64_t> values = {0, 1, 127, 128, 255, 300, (1ull << 32) - 1, 1ull << 32,
                                  ~0ull, ~0ull - 1};
  for (int i = 0; i < 64; i++) values.push_back(1ull << i);
  std::string s;
  for (uint64_t v : values) PutVarint64(&s, v);
  Slice in(s);
  for (uint64_t v : values) {
    uint64_t got;
    ASSERT_TRUE(GetVarint64(&in, &got));
    EXPECT_EQ(v, got);
  }
  EXPECT_TRUE(in.empty());
  // Every truncation of a multi-byte varint is rejected, never over-read.
  std::string one;
  PutVarint64(&one, ~0ull);
  for (size_t len = 0; len < one.size(); len++) {
    Slice t(one.data(), len);
    uint64_t got;
    EXPECT_FALSE(GetVarint64(&t, &got)) << len;
  }
}

TEST(Coding, Varint32Overflow) {
  std::string s("\xff\xff\xff\xff\x1f", 5);  // > 32 bits
  Slice in(s);
  uint32_t v;
  EXPECT_FALSE(GetVarint32(&in, &v));
}

TEST(Coding, LengthPrefixed) {
  std::string s;
  PutLengthPrefixedSlice(&s, "hello");
  PutLengthPrefixedSlice(&s, "");
  Slice in(s), out;
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &out));
  EXPECT_EQ("hello", out.ToString());
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &out));
  EXPECT_EQ("", out.ToString());
  EXPECT_FALSE(GetLengthPrefixedSlice(&in, &out));
}

TEST(Crc32c, StandardVectors) {
  // RFC 3720 B.4 test vectors.
  char buf[32];
  std::memset(buf, 0, sizeof(buf));
  EXPECT_EQ(0x8a9136aau, crc32c::Value(buf, sizeof(buf)));
  std::memset(buf, 0xff, sizeof(buf));
  EXPECT_EQ(0x62a8ab43u, crc32c::Value(buf, sizeof(buf)));
  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(i);
  EXPECT_EQ(0x46dd794eu, crc32c::Value(buf, sizeof(buf)));
  EXPECT_EQ(0xe3069283u, crc32c::Value("123456789", 9));
}

TEST(Crc32c, ExtendAndMask) {
  EXPECT_EQ(crc32c::Value("hello world", 11),
            crc32c::Extend(crc32c::Value("hello ", 6), "world", 5));
  uint32_t crc = crc32c::Value("foo", 3);
  EXPECT_NE(crc, crc32c::Mask(crc));
  EXPECT_EQ(crc, crc32c::Unmask(crc32c::Mask(crc)));
}

TEST(Hash64, IsXxh64Seed0) {
  // Reference values of XXH64 with seed 0.
  EXPECT_EQ(0xef46db3751d8e999ull, Hash64("", 0));
  EXPECT_EQ(0xd24ec4f1a98c6e5bull, Hash64("a", 1));
}

TEST(InternalKey, OrderAndParse) {
  InternalKeyComparator cmp(BytewiseComparator());
  InternalKey a("foo", 100, ValueType::kValue);
  InternalKey b("foo", 99, ValueType::kValue);
  InternalKey c("foo", 100, ValueType::kDeletion);
  InternalKey d("fop", 1, ValueType::kValue);
  EXPECT_LT(cmp.Compare(a.Encode(), b.Encode()), 0);  // newer first
  EXPECT_LT(cmp.Compare(a.Encode(), c.Encode()), 0);  // value type sorts before deletion
  EXPECT_LT(cmp.Compare(b.Encode(), d.Encode()), 0);
  ParsedInternalKey p;
  ASSERT_TRUE(ParseInternalKey(c.Encode(), &p));
  EXPECT_EQ("foo", p.user_key.ToString());
  EXPECT_EQ(100u, p.sequence);
  EXPECT_EQ(ValueType::kDeletion, p.type);
  EXPECT_FALSE(ParseInternalKey(Slice("short"), &p));
  std::string bad = "k";
  PutFixed64(&bad, (5ull << 8) | 7);  // unknown type
  EXPECT_FALSE(ParseInternalKey(bad, &p));
}

}  // namespace
}  // namespace accelkv
