// StagingGroupCuts and SlicePieces (staging_groups.h): the order in which a
// key-first job's tables are staged.
#include "gpu/staging_groups.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace accelkv {
namespace gpu {
namespace {

std::string Key(uint32_t x) {  // 4 big-endian bytes after a shared prefix
  std::string k = "user";
  for (int shift = 24; shift >= 0; shift -= 8) k.push_back(static_cast<char>(x >> shift));
  return k;
}

// Tables that span the whole key range are cut evenly; a table in one part
// of the range goes whole into the groups of that part.
TEST(StagingGroupsTest, CutsFollowTheKeys) {
  const std::string lo = Key(0), mid = Key(0x80000000u), hi = Key(0xffffffffu);
  const std::vector<TableKeySpan> tables = {
      {lo, hi, 8 << 20},   // the whole range
      {lo, mid, 4 << 20},  // its lower half
      {mid, hi, 1000},     // its upper half, small
  };
  const auto cuts = StagingGroupCuts(tables, 4, 4096);
  ASSERT_EQ(3u, cuts.size());
  for (const auto& c : cuts) ASSERT_EQ(5u, c.size());
  // Even quarters of the first table, at 4 KiB multiples.
  EXPECT_EQ((std::vector<uint64_t>{0, 2 << 20, 4 << 20, 6 << 20, 8 << 20}), cuts[0]);
  // The lower half's table: halves in groups 0 and 1, nothing after.
  EXPECT_EQ(0u, cuts[1][0]);
  EXPECT_NEAR(2 << 20, cuts[1][1], 4096);
  EXPECT_NEAR(4 << 20, cuts[1][2], 4096);  // mid is a hair past the range's half
  EXPECT_EQ(uint64_t{4} << 20, cuts[1][4]);
  // The upper half's: nothing before group 2; its inner cut rounds down to
  // 0 (4 KiB multiples), so the table goes in group 3.
  EXPECT_EQ(0u, cuts[2][2]);
  EXPECT_EQ(1000u, cuts[2][4]);
  for (const auto& c : cuts) {
    for (size_t g = 1; g < c.size(); ++g) EXPECT_LE(c[g - 1], c[g]);
  }
}

// One group, equal keys, empty tables: the cuts stay in order and cover
// every byte.
TEST(StagingGroupsTest, DegenerateInputs) {
  const std::string a = Key(7);
  EXPECT_TRUE(StagingGroupCuts({}, 4, 4096).empty());
  const auto one = StagingGroupCuts({{a, a, 12345}}, 1, 4096);
  EXPECT_EQ((std::vector<uint64_t>{0, 12345}), one[0]);
  // A job of one key: every table at the range's start, in group 0.
  const auto same = StagingGroupCuts({{a, a, 1 << 20}, {a, a, 0}}, 3, 4096);
  EXPECT_EQ((std::vector<uint64_t>{0, 1 << 20, 1 << 20, 1 << 20}), same[0]);
  EXPECT_EQ((std::vector<uint64_t>{0, 0, 0, 0}), same[1]);
  // A table of one key in the range's upper half: in the group of that
  // half.
  const auto point =
      StagingGroupCuts({{Key(0), Key(1000), 1 << 20}, {Key(800), Key(800), 8192}}, 2, 4096);
  EXPECT_EQ((std::vector<uint64_t>{0, 0, 8192}), point[1]);
}

TEST(StagingGroupsTest, SlicePiecesCoversTheRange) {
  const std::string bytes = "abcdefghijklmnopqrstuvwxyz";
  const std::vector<Slice> pieces = {Slice(bytes.data(), 5), Slice(bytes.data() + 5, 0),
                                     Slice(bytes.data() + 5, 10), Slice(bytes.data() + 15, 11)};
  std::vector<Slice> out;
  for (uint64_t lo = 0; lo <= bytes.size(); ++lo) {
    for (uint64_t hi = lo; hi <= bytes.size(); ++hi) {
      SlicePieces(pieces, lo, hi, &out);
      std::string got;
      for (const Slice& s : out) {
        EXPECT_GT(s.size(), 0u);
        got += s.ToString();
      }
      EXPECT_EQ(bytes.substr(lo, hi - lo), got) << lo << ".." << hi;
    }
  }
}

}  // namespace
}  // namespace gpu
}  // namespace accelkv
