#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "table/block.h"
#include "table/block_builder.h"
#include "table/table_test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace accelkv {
namespace {

BlockContents Copy(const Slice& s) {
  BlockContents c;
  c.data.reset(new char[s.size() == 0 ? 1 : s.size()]);
  if (!s.empty()) std::memcpy(c.data.get(), s.data(), s.size());
  c.size = s.size();
  return c;
}

std::unique_ptr<Block> BuildBlock(const std::vector<std::pair<std::string, std::string>>& kvs) {
  BlockBuilder b;
  for (const auto& [k, v] : kvs) b.Add(k, v);
  const uint64_t estimate = b.CurrentSizeEstimate();
  const Slice contents = b.Finish();
  EXPECT_EQ(estimate, contents.size());
  std::unique_ptr<Block> block;
  EXPECT_TRUE(Block::Parse(Copy(contents), &block).ok());
  return block;
}

// Sorted, distinct keys covering the edge cases of the format.
std::vector<std::pair<std::string, std::string>> EdgeCaseEntries() {
  std::map<std::string, std::string> m;
  m[""] = "empty key";
  m["a"] = "";
  m["ab"] = "";
  m["abc"] = "prefix chain";
  m[std::string("a\0", 2)] = std::string("\0\0\0", 3);
  m[std::string("\0", 1)] = "zero byte key";
  m[std::string(1024, 'k')] = std::string(300, 'v');
  for (int len = 0; len <= 1024; len += 97) m["len" + std::string(len, 'x')] = std::to_string(len);
  return {m.begin(), m.end()};
}

TEST(BlockTest, ExactLayoutOfTwoEntries) {
  BlockBuilder b;
  b.Add("ab", "X");
  b.Add("c", "");
  const Slice got = b.Finish();
  std::string want =
      "abc"
      "X";
  for (uint32_t v : {0u, 2u, 3u}) PutFixed32(&want, v);  // key_offsets
  for (uint32_t v : {3u, 4u, 4u}) PutFixed32(&want, v);  // value_offsets
  PutFixed32(&want, 2);                                  // n
  EXPECT_EQ(want, got.ToString());
}

TEST(BlockTest, EmptyBlockIsTwelveBytes) {
  BlockBuilder b;
  const Slice got = b.Finish();
  ASSERT_EQ(12u, got.size());
  EXPECT_EQ(std::string(12, '\0'), got.ToString());
  std::unique_ptr<Block> block;
  ASSERT_TRUE(Block::Parse(Copy(got), &block).ok());
  EXPECT_EQ(0u, block->num_entries());
  std::unique_ptr<Iterator> it(block->NewIterator(BytewiseComparator()));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek("a");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("a");
  EXPECT_FALSE(it->Valid());
}

TEST(BlockTest, RoundTripEdgeCases) {
  const auto kvs = EdgeCaseEntries();
  auto block = BuildBlock(kvs);
  ASSERT_EQ(kvs.size(), block->num_entries());
  for (uint32_t i = 0; i < kvs.size(); ++i) {
    EXPECT_EQ(kvs[i].first, block->key(i).ToString());
    EXPECT_EQ(kvs[i].second, block->value(i).ToString());
  }
  std::unique_ptr<Iterator> it(block->NewIterator(BytewiseComparator()));
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    EXPECT_EQ(kvs[i].first, it->key().ToString());
    EXPECT_EQ(kvs[i].second, it->value().ToString());
  }
  EXPECT_EQ(kvs.size(), i);
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    --i;
    EXPECT_EQ(kvs[i].first, it->key().ToString());
  }
  EXPECT_EQ(0u, i);
  EXPECT_TRUE(it->status().ok());
}

TEST(BlockTest, SeeksMatchModel) {
  Random rnd(test::TestSeed());
  std::map<std::string, std::string> m;
  for (int i = 0; i < 300; ++i) {
    std::string k(rnd.Uniform(6), '\0');
    for (char& c : k) c = static_cast<char>('a' + rnd.Uniform(4));
    m[k] = std::to_string(i);
  }
  const std::vector<std::pair<std::string, std::string>> kvs(m.begin(), m.end());
  auto block = BuildBlock(kvs);
  std::unique_ptr<Iterator> it(block->NewIterator(BytewiseComparator()));
  for (int round = 0; round < 2000; ++round) {
    std::string target(rnd.Uniform(7), '\0');
    for (char& c : target) c = static_cast<char>('a' + rnd.Uniform(5));
    it->Seek(target);
    auto lb = m.lower_bound(target);
    ASSERT_EQ(lb != m.end(), it->Valid()) << target;
    if (lb != m.end()) {
      ASSERT_EQ(lb->first, it->key().ToString());
      // One step in each direction from the seek position.
      it->Prev();
      if (lb == m.begin()) {
        ASSERT_FALSE(it->Valid());
      } else {
        ASSERT_EQ(std::prev(lb)->first, it->key().ToString());
      }
    }
    it->SeekForPrev(target);
    auto ub = m.upper_bound(target);
    ASSERT_EQ(ub != m.begin(), it->Valid()) << target;
    if (ub != m.begin()) {
      ASSERT_EQ(std::prev(ub)->first, it->key().ToString());
      it->Next();
      if (ub == m.end()) {
        ASSERT_FALSE(it->Valid());
      } else {
        ASSERT_EQ(ub->first, it->key().ToString());
      }
    }
  }
}

// Parses bytes that may be corrupt; if they parse, touches every entry and
// seeks, which must stay in bounds (checked by ASan in sanitizer builds).
bool ParseAndWalk(const std::string& bytes) {
  std::unique_ptr<Block> block;
  Status s = Block::Parse(Copy(bytes), &block);
  if (!s.ok()) {
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    return false;
  }
  size_t total = 0;
  for (uint32_t i = 0; i < block->num_entries(); ++i) {
    total += block->key(i).size() + block->value(i).size();
  }
  EXPECT_LE(total, bytes.size());
  std::unique_ptr<Iterator> it(block->NewIterator(BytewiseComparator()));
  it->Seek("len");
  it->SeekForPrev("abc");
  for (it->SeekToLast(); it->Valid(); it->Prev()) total += it->key().size();
  return true;
}

TEST(BlockTest, EveryTruncationIsCorruptionOrValid) {
  BlockBuilder b;
  for (const auto& [k, v] : EdgeCaseEntries()) b.Add(k, v);
  const std::string full = b.Finish().ToString();
  ASSERT_TRUE(ParseAndWalk(full));
  int valid = 0;
  for (size_t len = 0; len < full.size(); ++len) {
    valid += ParseAndWalk(full.substr(0, len));             // tail cut
    valid += ParseAndWalk(full.substr(full.size() - len));  // head cut
  }
  // Dropping the head shifts every offset: no strict truncation should parse.
  EXPECT_EQ(0, valid);
}

TEST(BlockTest, RandomByteFlipsNeverCrash) {
  Random rnd(test::TestSeed());
  BlockBuilder b;
  for (const auto& [k, v] : EdgeCaseEntries()) b.Add(k, v);
  const std::string full = b.Finish().ToString();
  int corrupt = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = full;
    const int flips = 1 + static_cast<int>(rnd.Uniform(4));
    for (int f = 0; f < flips; ++f) {
      // Favour the offset arrays and count, where flips change the structure.
      const size_t tail = 8 * (EdgeCaseEntries().size() + 1) + 4;
      const size_t pos =
          rnd.OneIn(2) ? bytes.size() - 1 - rnd.Uniform(tail) : rnd.Uniform(bytes.size());
      bytes[pos] = static_cast<char>(bytes[pos] ^ (1 + rnd.Uniform(255)));
    }
    corrupt += !ParseAndWalk(bytes);
  }
  EXPECT_GT(corrupt, 0);
}

TEST(BlockTest, ValidatorRejectsEachStructuralError) {
  BlockBuilder b;
  b.Add("a", "1");
  b.Add("bb", "22");
  const std::string good = b.Finish().ToString();  // "abb" "122" ko[0,1,3] vo[3,4,6] n=2
  ASSERT_TRUE(Block::Validate(good).ok());
  auto with = [&](size_t pos, uint32_t v) {
    std::string s = good;
    EncodeFixed32(s.data() + pos, v);
    return s;
  };
  const size_t ko = 6, vo = ko + 12, np = vo + 12;
  EXPECT_TRUE(Block::Validate(std::string(3, '\0')).IsCorruption());   // size < 4
  EXPECT_TRUE(Block::Validate(with(np, 3)).IsCorruption());            // n too large
  EXPECT_TRUE(Block::Validate(with(np, 0xffffffffu)).IsCorruption());  // n overflow
  EXPECT_TRUE(Block::Validate(with(ko, 1)).IsCorruption());            // key_offsets[0] != 0
  EXPECT_TRUE(Block::Validate(with(ko + 4, 4)).IsCorruption());        // keys not monotonic
  EXPECT_TRUE(Block::Validate(with(vo, 2)).IsCorruption());            // ko[n] != vo[0]
  EXPECT_TRUE(Block::Validate(with(vo + 4, 2)).IsCorruption());        // values not monotonic
  EXPECT_TRUE(Block::Validate(with(vo + 8, 5)).IsCorruption());        // vo[n] != offsets start
  EXPECT_TRUE(Block::Validate(with(vo + 8, 7)).IsCorruption());        // past offsets start
}

}  // namespace
}  // namespace accelkv
