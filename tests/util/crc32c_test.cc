// CRC32C over long and unaligned inputs, against a bit-at-a-time reference:
// the hardware path splits inputs of 768 bytes and more into three stripes
// and combines them, so lengths around every stripe boundary are covered.
#include "util/crc32c.h"

#include <gtest/gtest.h>

#include <string>

#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

uint32_t ReferenceCrc32c(const char* data, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= static_cast<unsigned char>(data[i]);
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
  }
  return c ^ 0xffffffffu;
}

TEST(Crc32cLong, MatchesReferenceAtEveryLengthAndAlignment) {
  Random rnd(test::TestSeed());
  const std::string buf = test::RandomString(&rnd, 40000);
  for (size_t n = 0; n <= 3000; ++n) {
    const size_t off = n % 8;
    ASSERT_EQ(ReferenceCrc32c(buf.data() + off, n), crc32c::Value(buf.data() + off, n)) << n;
  }
  for (size_t n : {size_t{4096}, size_t{4101}, size_t{12287}, size_t{12288}, size_t{12289},
                   size_t{13056}, size_t{24576 + 768 + 5}, size_t{39990}}) {
    for (size_t off = 0; off < 8; off += 3) {
      ASSERT_EQ(ReferenceCrc32c(buf.data() + off, n), crc32c::Value(buf.data() + off, n)) << n;
    }
  }
}

TEST(Crc32cLong, ExtendSplitsAnywhere) {
  Random rnd(test::TestSeed());
  const std::string buf = test::RandomString(&rnd, 20000);
  const uint32_t whole = crc32c::Value(buf.data(), buf.size());
  for (size_t cut : {size_t{0}, size_t{1}, size_t{767}, size_t{768}, size_t{5000}, size_t{12288},
                     size_t{19999}, size_t{20000}}) {
    const uint32_t head = crc32c::Value(buf.data(), cut);
    EXPECT_EQ(whole, crc32c::Extend(head, buf.data() + cut, buf.size() - cut)) << cut;
  }
}

}  // namespace
}  // namespace accelkv
