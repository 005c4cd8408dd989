// Key formats and the value factory: round trips, YCSB's key names, and that
// every kind of damage to a value is detected.
#ifdef ACCELKV_BENCH_TESTLIB

#include <gtest/gtest.h>

#include <string>

#include "keys.h"
#include "testutil/test_util.h"
#include "values.h"

namespace accelkv_bench {
namespace {

TEST(Keys, DbBenchKeysAreFixedSizeOrderedAndParseBack) {
  std::string a, b;
  DbBenchKey(42, 16, &a);
  EXPECT_EQ(a, "0000000000000042");
  uint64_t index = 0;
  ASSERT_TRUE(ParseDbBenchKey(a, 16, &index));
  EXPECT_EQ(index, 42u);
  for (uint64_t i = 0; i < 2000; i += 7) {
    DbBenchKey(i, 16, &a);
    DbBenchKey(i + 1, 16, &b);
    EXPECT_LT(a, b);
    ASSERT_TRUE(ParseDbBenchKey(a, 16, &index));
    EXPECT_EQ(index, i);
  }
  DbBenchKey(0, 16, &a);
  EXPECT_EQ(a, "0000000000000000");
  DbBenchKey(119999999, 16, &a);
  EXPECT_EQ(a, "0000000119999999");
  DbBenchKey(9876543210123456, 16, &a);
  EXPECT_EQ(a, "9876543210123456");
  DbBenchKey(129876543210123456, 16, &a);  // wider than the key: its low digits
  EXPECT_EQ(a, "9876543210123456");
  DbBenchKey(7, 1, &a);
  EXPECT_EQ(a, "7");
  EXPECT_FALSE(ParseDbBenchKey("000000000000004x", 16, &index));
  EXPECT_FALSE(ParseDbBenchKey("42", 16, &index));
  EXPECT_FALSE(ParseDbBenchKey("", 0, &index));
}

TEST(Keys, MissingKeysNeverEqualWrittenKeys) {
  std::string missing, written;
  uint64_t index = 0;
  for (uint64_t i = 0; i < 1000; i++) {
    MissingKey(i, 8, &missing);
    ASSERT_EQ(missing.size(), 8u);
    EXPECT_FALSE(ParseDbBenchKey(missing, 8, &index));
    DbBenchKey(i, 8, &written);
    EXPECT_NE(missing, written);
  }
}

TEST(Keys, MinKeySizeHoldsTheLargestIndexAndTheMissingMarker) {
  EXPECT_EQ(MinDbBenchKeySize(1), 2u);
  EXPECT_EQ(MinDbBenchKeySize(10), 2u);
  EXPECT_EQ(MinDbBenchKeySize(11), 3u);
  EXPECT_EQ(MinDbBenchKeySize(2000000), 8u);
}

TEST(Keys, YcsbKeysMatchYcsbBuildKeyName) {
  // Values from YCSB's Utils.fnvhash64 (Java long arithmetic, Math.abs).
  std::string key;
  YcsbKey(0, &key);
  EXPECT_EQ(key, "user6284781860667377211");
  YcsbKey(1, &key);
  EXPECT_EQ(key, "user8517097267634966620");
  YcsbKey(42, &key);
  EXPECT_EQ(key, "user55488592825689361");
  YcsbKey(1000000, &key);
  EXPECT_EQ(key, "user1011632231655643464");
}

TEST(Values, MakeThenCheckRoundTripsForEverySize) {
  ValueFactory values(7);
  std::string value;
  uint32_t version = 0;
  std::string why;
  for (size_t size : {size_t{8}, size_t{9}, size_t{100}, size_t{4096}, size_t{3} << 20}) {
    values.Make("some-key", 17, size, &value);
    ASSERT_EQ(value.size(), size);
    ASSERT_TRUE(values.Check("some-key", value, &version, &why)) << why;
    EXPECT_EQ(version, 17u);
  }
}

TEST(Values, DeterministicForKeySeedAndVersion) {
  ValueFactory a(1), b(1), c(2);
  std::string va, vb, vc, v2;
  a.Make("k", 1, 100, &va);
  b.Make("k", 1, 100, &vb);
  c.Make("k", 1, 100, &vc);
  a.Make("k", 2, 100, &v2);
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
  EXPECT_NE(va, v2);
}

TEST(Values, CheckDetectsEveryKindOfDamage) {
  accelkv::Random rnd(accelkv::test::TestSeed());
  ValueFactory values(99);
  std::string value, why;
  uint32_t version = 0;
  values.Make("key-1", 3, 200, &value);

  EXPECT_FALSE(values.Check("key-2", value, &version, &why)) << "foreign key";
  EXPECT_FALSE(values.Check("key-1", value.substr(0, 199), &version, &why)) << "truncated";
  EXPECT_FALSE(values.Check("key-1", value + "x", &version, &why)) << "extended";
  EXPECT_FALSE(values.Check("key-1", value.substr(0, 7), &version, &why)) << "shorter than header";
  ValueFactory other_seed(100);
  EXPECT_FALSE(other_seed.Check("key-1", value, &version, &why)) << "other seed";
  for (int trial = 0; trial < 200; trial++) {
    std::string damaged = value;
    const size_t pos = rnd.Uniform(damaged.size());
    damaged[pos] = static_cast<char>(damaged[pos] ^ (1 + rnd.Uniform(255)));
    EXPECT_FALSE(values.Check("key-1", damaged, &version, &why)) << "byte " << pos;
  }
  // A value of another version under the same key is itself consistent: the
  // key's write history (KeyState) catches stale versions.
  std::string older;
  values.Make("key-1", 2, 200, &older);
  ASSERT_TRUE(values.Check("key-1", older, &version, &why));
  EXPECT_EQ(version, 2u);
}

}  // namespace
}  // namespace accelkv_bench

#endif  // ACCELKV_BENCH_TESTLIB
