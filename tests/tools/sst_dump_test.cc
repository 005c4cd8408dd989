// sst-dump on table files written directly with TableBuilder: properties,
// entries, limits, and damaged files (exit 1 with Corruption, never a crash).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testutil/test_util.h"
#include "tools/cli_test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

using test::CliResult;
using test::RunTool;
using test::TableEntry;

class SstDumpTest : public testing::Test {
 protected:
  SstDumpTest() : path_(dir_.File("000007.sst")) {}

  // 300 user keys "key000".."key299", values of 30..330 bytes, a deletion
  // every 10th key, and a binary key at the end; small blocks so the table
  // has many of them.
  void WriteSample() {
    for (int i = 0; i < 300; ++i) {
      char key[16];
      std::snprintf(key, sizeof(key), "key%03d", i);
      entries_.push_back({key, static_cast<uint64_t>(1000 + i), i % 10 != 0,
                          i % 10 != 0 ? std::string(30 + i, 'a' + i % 26) : std::string()});
    }
    entries_.push_back({std::string("z\x00\xff", 3), 5, true, std::string("v\n", 2)});
    test::WriteTableFile(path_, entries_, 512);
  }

  test::TempDir dir_;
  std::string path_;
  std::vector<TableEntry> entries_;
};

TEST_F(SstDumpTest, PrintsPropertiesAndVerifies) {
  WriteSample();
  const CliResult r = RunTool({"sst-dump", path_});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("file: " + path_ + "\n")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("accelkv.num-entries: 301\n")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("accelkv.num-deletions: 30\n")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("accelkv.comparator: accelkv.BytewiseComparator\n"));
  EXPECT_NE(std::string::npos, r.out.find("data blocks: ")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("data blocks: 1\n")) << r.out;  // many blocks
  EXPECT_NE(std::string::npos, r.out.find("verify: OK\n")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find(" => ")) << "entries only with --entries";
}

TEST_F(SstDumpTest, EntriesWithSequenceTypeAndTruncatedValues) {
  WriteSample();
  CliResult r = RunTool({"sst-dump", path_, "--entries"});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("key000 @ 1000 : DEL => \n")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("key001 @ 1001 : PUT => " + std::string(31, 'b') + "\n"));
  // 64 bytes shown, then the full length.
  EXPECT_NE(std::string::npos,
            r.out.find("key299 @ 1299 : PUT => " + std::string(64, 'n') + "...(329 bytes)\n"))
      << r.out;
  EXPECT_NE(std::string::npos, r.out.find("z\\x00\\xff @ 5 : PUT => v\\x0a\n")) << r.out;

  r = RunTool({"sst-dump", "--entries", "--limit", "2", path_, "--hex"});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("6b6579303030 @ 1000 : DEL => \n")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("6b6579303031 @ 1001 : PUT => 6262")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("6b6579303032 @")) << "limit 2";
}

TEST_F(SstDumpTest, MissingFileFails) {
  const CliResult r = RunTool({"sst-dump", dir_.File("nope.sst")});
  EXPECT_EQ(1, r.code);
  EXPECT_NE(std::string::npos, r.err.find("NotFound")) << r.err;
}

TEST_F(SstDumpTest, TruncatedFileIsCorruption) {
  WriteSample();
  const std::string bytes = test::ReadFileBytes(path_);
  for (size_t len : {size_t{0}, size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    test::WriteFileBytes(path_, bytes.substr(0, len));
    const CliResult r = RunTool({"sst-dump", path_, "--entries"});
    EXPECT_EQ(1, r.code) << "length " << len;
    EXPECT_NE(std::string::npos, r.err.find("Corruption")) << "length " << len << ": " << r.err;
  }
}

TEST_F(SstDumpTest, FlippedDataByteIsCorruption) {
  WriteSample();
  std::string bytes = test::ReadFileBytes(path_);
  bytes[100] ^= 0x01;  // inside the first data block
  test::WriteFileBytes(path_, bytes);
  const CliResult r = RunTool({"sst-dump", path_});
  EXPECT_EQ(1, r.code);
  EXPECT_NE(std::string::npos, r.out.find("verify: Corruption")) << r.out;
  EXPECT_NE(std::string::npos, r.err.find("Corruption")) << r.err;
}

// Random truncations and byte flips anywhere: exit 0 or 1, never a crash;
// a failure always names an error.
TEST_F(SstDumpTest, RandomDamageNeverCrashes) {
  WriteSample();
  const std::string good = test::ReadFileBytes(path_);
  Random rnd(test::TestSeed());
  for (int round = 0; round < 150; ++round) {
    std::string bytes = good;
    if (rnd.OneIn(3)) {
      bytes.resize(rnd.Uniform(bytes.size()));
    } else {
      const int flips = 1 + static_cast<int>(rnd.Uniform(4));
      for (int f = 0; f < flips; ++f) {
        // Bias towards the tail, where footer, index and properties live.
        const size_t pos = rnd.OneIn(2)
                               ? bytes.size() - 1 - rnd.Uniform(std::min<size_t>(bytes.size(), 200))
                               : rnd.Uniform(bytes.size());
        bytes[pos] = static_cast<char>(bytes[pos] ^ (1 + rnd.Uniform(255)));
      }
    }
    test::WriteFileBytes(path_, bytes);
    const CliResult r = RunTool({"sst-dump", path_, "--entries"});
    ASSERT_TRUE(r.code == 0 || r.code == 1) << "round " << round << " code " << r.code;
    if (r.code == 1) {
      EXPECT_NE(std::string::npos, r.err.find("accelkv: sst-dump")) << r.err;
    }
  }
}

}  // namespace
}  // namespace accelkv
