// Compaction (IsBaseLevelForKey, bottommost, trivial move, ranges, debug
// strings) and OutputSplitter (size rule, grandparent rule, user-key rule).
#include "compaction/compaction.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "accelkv/comparator.h"
#include "compaction/compaction_test_util.h"

namespace accelkv {
namespace {

using test::MakeFile;

class CompactionTest : public testing::Test {
 protected:
  InternalKeyComparator icmp_{BytewiseComparator()};
};

std::string IKey(const std::string& user_key, SequenceNumber seq) {
  return InternalKey(user_key, seq, ValueType::kValue).Encode().ToString();
}

TEST_F(CompactionTest, IsBaseLevelForKeyBinarySearchesEveryDeeperLevel) {
  Compaction::Params p;
  p.level = 1;
  p.output_level = 2;
  p.inputs[0] = {MakeFile(1, "a", "z", 100)};
  p.deeper_levels = {
      {MakeFile(10, "b", "d", 10), MakeFile(11, "f", "f", 10), MakeFile(12, "k", "m", 10)},
      {},
      {MakeFile(20, "p", "r", 10)},
  };
  Compaction c(std::move(p), &icmp_);
  for (const char* k : {"b", "c", "d", "f", "k", "l", "m", "p", "q", "r"}) {
    EXPECT_FALSE(c.IsBaseLevelForKey(k)) << k;
  }
  for (const char* k : {"a", "da", "e", "ff", "g", "j", "n", "o", "s", "z", ""}) {
    EXPECT_TRUE(c.IsBaseLevelForKey(k)) << k;
  }
  EXPECT_FALSE(c.IsBottommost());
}

TEST_F(CompactionTest, NoDeeperLevelsMeansEveryKeyIsBase) {
  Compaction::Params p;
  p.level = 5;
  p.output_level = 6;
  p.inputs[0] = {MakeFile(1, "a", "c", 100)};
  Compaction c(std::move(p), &icmp_);
  EXPECT_TRUE(c.IsBaseLevelForKey("b"));
  EXPECT_TRUE(c.IsBottommost());
}

TEST_F(CompactionTest, BottommostLooksOnlyAtTheInputRange) {
  Compaction::Params p;
  p.level = 1;
  p.output_level = 2;
  p.inputs[0] = {MakeFile(1, "d", "f", 100)};
  p.inputs[1] = {MakeFile(2, "c", "g", 100)};
  p.deeper_levels = {{MakeFile(10, "a", "b", 10), MakeFile(11, "h", "i", 10)}};
  Compaction c(p, &icmp_);
  EXPECT_TRUE(c.IsBottommost());
  // A deeper file touching the range at its end makes it not bottommost.
  p.deeper_levels = {{MakeFile(10, "a", "b", 10), MakeFile(11, "g", "i", 10)}};
  EXPECT_FALSE(Compaction(p, &icmp_).IsBottommost());
  p.deeper_levels = {{}, {MakeFile(12, "a", "c", 10)}};
  EXPECT_FALSE(Compaction(p, &icmp_).IsBottommost());
}

TEST_F(CompactionTest, SmallestLargestAndTotalBytesCoverBothInputLevels) {
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  p.reason = CompactionReason::kLevel0FileCount;
  p.inputs[0] = {MakeFile(3, "c", "m", 1000, 30, 31), MakeFile(2, "b", "e", 2000, 20, 21)};
  p.inputs[1] = {MakeFile(1, "b", "z", 1 << 20, 5, 6)};
  Compaction c(std::move(p), &icmp_);
  // Same user key "b": the higher sequence sorts first.
  EXPECT_EQ(IKey("b", 20), c.smallest().Encode().ToString());
  EXPECT_EQ(IKey("z", 6), c.largest().Encode().ToString());
  EXPECT_EQ(3000u + (1u << 20), c.TotalInputBytes());
  EXPECT_EQ("L0->L1 l0-file-count: 2+1 files, 1.0 MiB [b .. z]", c.DebugString());
}

TEST_F(CompactionTest, DebugStringEscapesBinaryKeys) {
  Compaction::Params p;
  p.level = 2;
  p.output_level = 3;
  p.reason = CompactionReason::kManual;
  p.inputs[0] = {MakeFile(3, std::string("a\x01", 2), "b\\", 3 << 20)};
  Compaction c(std::move(p), &icmp_);
  EXPECT_EQ("L2->L3 manual: 1+0 files, 3.0 MiB [a\\x01 .. b\\x5c]", c.DebugString());
}

TEST_F(CompactionTest, ReasonNames) {
  EXPECT_STREQ("l0-file-count", CompactionReasonName(CompactionReason::kLevel0FileCount));
  EXPECT_STREQ("level-size", CompactionReasonName(CompactionReason::kLevelSize));
  EXPECT_STREQ("manual", CompactionReasonName(CompactionReason::kManual));
}

TEST_F(CompactionTest, TrivialMove) {
  Compaction::Params p;
  p.level = 1;
  p.output_level = 2;
  p.inputs[0] = {MakeFile(1, "a", "c", 100)};
  p.grandparents = {MakeFile(20, "a", "b", 60), MakeFile(21, "b1", "c", 40)};
  p.max_grandparent_overlap_bytes = 100;
  EXPECT_TRUE(Compaction(p, &icmp_).IsTrivialMove());
  // Grandparent overlap above the limit.
  p.max_grandparent_overlap_bytes = 99;
  EXPECT_FALSE(Compaction(p, &icmp_).IsTrivialMove());
  p.max_grandparent_overlap_bytes = 100;
  // A file in the output level.
  p.inputs[1] = {MakeFile(5, "b", "d", 10)};
  EXPECT_FALSE(Compaction(p, &icmp_).IsTrivialMove());
  p.inputs[1].clear();
  // Two input files of level 1 move together, the grandparent limit per file.
  p.inputs[0].push_back(MakeFile(2, "d", "e", 100));
  p.max_grandparent_overlap_bytes = 50;
  EXPECT_TRUE(Compaction(p, &icmp_).IsTrivialMove());
  p.max_grandparent_overlap_bytes = 49;
  EXPECT_FALSE(Compaction(p, &icmp_).IsTrivialMove());
  p.max_grandparent_overlap_bytes = 100;
  // Level 0 files overlap one another: two never move together.
  p.level = 0;
  p.output_level = 1;
  EXPECT_FALSE(Compaction(p, &icmp_).IsTrivialMove());
  p.inputs[0].pop_back();
  EXPECT_TRUE(Compaction(p, &icmp_).IsTrivialMove());
  p.level = 1;
  p.output_level = 2;
  // Manual compactions rewrite.
  p.reason = CompactionReason::kManual;
  EXPECT_FALSE(Compaction(p, &icmp_).IsTrivialMove());
}

class OutputSplitterTest : public CompactionTest {
 protected:
  // A compaction with the given grandparents and limits.
  std::unique_ptr<Compaction> Make(std::vector<FileMetaPtr> grandparents, uint64_t max_size,
                                   uint64_t max_overlap) {
    Compaction::Params p;
    p.level = 1;
    p.output_level = 2;
    p.inputs[0] = {MakeFile(1, "a", "z", 100)};
    p.grandparents = std::move(grandparents);
    p.max_output_file_size = max_size;
    p.max_grandparent_overlap_bytes = max_overlap;
    return std::make_unique<Compaction>(std::move(p), &icmp_);
  }
};

TEST_F(OutputSplitterTest, SizeRule) {
  auto c = Make({}, 1000, 1 << 30);
  OutputSplitter s(c.get());
  EXPECT_FALSE(s.ShouldStopBefore(IKey("a", 9), 0));
  EXPECT_FALSE(s.ShouldStopBefore(IKey("b", 9), 999));
  EXPECT_TRUE(s.ShouldStopBefore(IKey("c", 9), 1000));
  EXPECT_FALSE(s.ShouldStopBefore(IKey("d", 9), 10));
  EXPECT_TRUE(s.ShouldStopBefore(IKey("e", 9), 5000));
}

TEST_F(OutputSplitterTest, NeverSplitsVersionsOfOneUserKey) {
  auto c = Make({}, 1000, 1 << 30);
  OutputSplitter s(c.get());
  EXPECT_FALSE(s.ShouldStopBefore(IKey("a", 9), 0));
  EXPECT_FALSE(s.ShouldStopBefore(IKey("a", 8), 5000));
  EXPECT_FALSE(s.ShouldStopBefore(IKey("a", 7), 6000));
  // The split happens at the next user key.
  EXPECT_TRUE(s.ShouldStopBefore(IKey("b", 9), 7000));
  EXPECT_FALSE(s.ShouldStopBefore(IKey("b", 3), 5000));
}

TEST_F(OutputSplitterTest, GrandparentRuleCountsSkippedFilesSinceTheOutputOpened) {
  // Grandparents of 100 bytes each; more than 250 bytes of overlap splits.
  auto c =
      Make({MakeFile(10, "a", "b", 100), MakeFile(11, "c", "d", 100), MakeFile(12, "e", "f", 100),
            MakeFile(13, "g", "h", 100), MakeFile(14, "i", "j", 100), MakeFile(15, "k", "l", 100),
            MakeFile(16, "m", "n", 100)},
           1 << 30, 250);
  OutputSplitter s(c.get());
  // The first key skips grandparents without counting them (LevelDB).
  EXPECT_FALSE(s.ShouldStopBefore(IKey("c1", 5), 0));  // skips 10: not counted
  EXPECT_FALSE(s.ShouldStopBefore(IKey("e1", 5), 1));  // skips 11: 100
  EXPECT_FALSE(s.ShouldStopBefore(IKey("g1", 5), 1));  // skips 12: 200
  EXPECT_FALSE(s.ShouldStopBefore(IKey("h", 5), 1));   // inside 13: 200
  EXPECT_TRUE(s.ShouldStopBefore(IKey("i1", 5), 1));   // skips 13: 300 > 250, reset
  EXPECT_FALSE(s.ShouldStopBefore(IKey("k1", 5), 1));  // skips 14: 100
  EXPECT_FALSE(s.ShouldStopBefore(IKey("m1", 5), 1));  // skips 15: 200
  EXPECT_TRUE(s.ShouldStopBefore(IKey("z", 5), 1));    // skips 16: 300
}

TEST_F(OutputSplitterTest, KeyEqualToGrandparentLargestDoesNotSkipIt) {
  auto c = Make({MakeFile(10, "a", "b", 100), MakeFile(11, "c", "d", 100)}, 1 << 30, 50);
  OutputSplitter s(c.get());
  EXPECT_FALSE(s.ShouldStopBefore(IKey("0", 5), 0));
  // "b"@1 equals file 10's largest: not past it.
  EXPECT_FALSE(s.ShouldStopBefore(IKey("b", 1), 1));
  EXPECT_TRUE(s.ShouldStopBefore(IKey("b1", 1), 1));
}

TEST_F(OutputSplitterTest, SizeSplitResetsTheOverlapCount) {
  auto c =
      Make({MakeFile(10, "b", "b", 100), MakeFile(11, "d", "d", 100), MakeFile(12, "f", "f", 100)},
           1000, 150);
  OutputSplitter s(c.get());
  EXPECT_FALSE(s.ShouldStopBefore(IKey("a", 5), 0));
  EXPECT_FALSE(s.ShouldStopBefore(IKey("c", 5), 10));    // 100
  EXPECT_TRUE(s.ShouldStopBefore(IKey("c1", 5), 1000));  // size; overlap reset
  EXPECT_FALSE(s.ShouldStopBefore(IKey("e", 5), 10));    // 100 since the split
  EXPECT_TRUE(s.ShouldStopBefore(IKey("g", 5), 10));     // 200 > 150
}

TEST_F(OutputSplitterTest, SameUserKeyDefersAGrandparentSplit) {
  auto c =
      Make({MakeFile(10, "a", "a", 100, 1, 1), MakeFile(11, "b", "b", 100, 1, 1)}, 1 << 30, 50);
  OutputSplitter s(c.get());
  EXPECT_FALSE(s.ShouldStopBefore(IKey("0", 5), 0));
  EXPECT_FALSE(s.ShouldStopBefore(IKey("a", 9), 1));  // before a@1: inside file 10
  EXPECT_FALSE(s.ShouldStopBefore(IKey("a", 0), 1));  // skips 10 (100 > 50), but same user key
  EXPECT_TRUE(s.ShouldStopBefore(IKey("b", 9), 1));   // deferred split; reset
  EXPECT_TRUE(s.ShouldStopBefore(IKey("c", 9), 1));   // skips 11: 100 > 50
}

// The bytewise order, but not saying so: the splitter takes its virtual path.
class OpaqueBytewise final : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return a.compare(b); }
  const char* Name() const override { return "test.OpaqueBytewise"; }
};

// The splitter tests' random keys and compactions: user key k is "k%05u";
// 20 grandparents of random sizes, 3 subcompaction boundaries, outputs of
// 500 bytes and a random grandparent overlap limit.
std::string SplitterUserKey(uint32_t k) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%05u", k);
  return std::string(buf);
}

template <typename Next>
Compaction::Params RandomSplitterParams(Next& next) {
  Compaction::Params p;
  p.level = 1;
  p.output_level = 2;
  p.inputs[0] = {MakeFile(1, "a", "z", 100)};
  for (uint32_t g = 0; g < 20; ++g) {
    p.grandparents.push_back(MakeFile(100 + g, SplitterUserKey(g * 50),
                                      SplitterUserKey(g * 50 + 20), 10 + next(100), 1, 1));
  }
  for (uint32_t b = 1; b < 4; ++b) p.subcompaction_boundaries.push_back(SplitterUserKey(b * 250));
  p.max_output_file_size = 500;
  p.max_grandparent_overlap_bytes = 50 + next(200);
  return p;
}

// ShouldStopBefore (bytewise fast path and virtual comparator) and
// ShouldStopBeforeKnown with a caller-computed same_user_key decide the same
// on random key sequences with grandparents, subcompaction boundaries and
// size limits hit exactly; so does ShouldStopBeforeCounted given the counts.
TEST_F(OutputSplitterTest, FastPathsDecideAsTheGeneralRule) {
  const OpaqueBytewise opaque;
  const InternalKeyComparator opaque_icmp(&opaque);
  uint32_t seed = 301;
  auto next = [&seed](uint32_t n) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % n;
  };
  const auto user_key = SplitterUserKey;
  for (int round = 0; round < 50; ++round) {
    const Compaction::Params p = RandomSplitterParams(next);
    const Compaction fast(p, &icmp_);
    const Compaction slow(p, &opaque_icmp);
    OutputSplitter a(&fast), b(&slow), known(&fast), counted(&fast);
    std::string last_user;
    uint32_t k = 0;
    SequenceNumber seq = 1000;
    for (int i = 0; i < 400; ++i) {
      if (next(3) != 0) k += 1 + next(4);  // else another version of the same user key
      const std::string u = user_key(k);
      const std::string key = IKey(u, seq--);
      const uint64_t size = 495 + next(10);  // around the limit, both sides
      const bool expected = a.ShouldStopBefore(key, size);
      ASSERT_EQ(expected, b.ShouldStopBefore(key, size)) << round << " " << i;
      ASSERT_EQ(expected, known.ShouldStopBeforeKnown(key, i > 0 && u == last_user, size))
          << round << " " << i;
      // The GPU plan's form: steps 1 and 4 as counts found by search.
      size_t below = 0;
      for (const FileMetaPtr& g : p.grandparents)
        below += icmp_.Compare(g->largest.Encode(), key) < 0;
      size_t bounds = 0;
      for (const std::string& bound : p.subcompaction_boundaries) bounds += bound <= u;
      ASSERT_EQ(expected,
                counted.ShouldStopBeforeCounted(i > 0 && u == last_user, below, bounds, size))
          << round << " " << i;
      last_user = u;
    }
  }
}

// SkipCounted over runs of keys decides as ShouldStopBeforeCounted key by
// key: a run it takes has no stopping key, and the state it leaves makes
// every later decision the same; it refuses the runs that cross a boundary
// or push the overlap past the limit (then the keys go one by one).
TEST_F(OutputSplitterTest, SkipCountedRunsDecideAsKeyByKey) {
  uint32_t seed = 7;
  auto next = [&seed](uint32_t n) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % n;
  };
  const auto user_key = SplitterUserKey;
  int taken = 0, refused = 0;
  for (int round = 0; round < 100; ++round) {
    const Compaction::Params p = RandomSplitterParams(next);
    const Compaction c(p, &icmp_);
    OutputSplitter one(&c), runs(&c);
    // The keys with their counts.
    struct Key {
      bool same;
      size_t below, bounds;
      uint64_t size;
    };
    std::vector<Key> keys;
    uint32_t k = 0;
    SequenceNumber seq = 1000;
    for (int i = 0; i < 400; ++i) {
      const bool same = i > 0 && next(3) == 0;
      if (!same) k += 1 + next(4);
      const std::string u = user_key(k);
      const std::string key = IKey(u, seq--);
      Key e{same, 0, 0, next(8) == 0 ? 500 + next(10) : next(500)};
      for (const FileMetaPtr& g : p.grandparents)
        e.below += icmp_.Compare(g->largest.Encode(), key) < 0;
      for (const std::string& bound : p.subcompaction_boundaries) e.bounds += bound <= u;
      keys.push_back(e);
    }
    size_t i = 0;
    while (i < keys.size()) {
      const Key& e = keys[i];
      ASSERT_EQ(one.ShouldStopBeforeCounted(e.same, e.below, e.bounds, e.size),
                runs.ShouldStopBeforeCounted(e.same, e.below, e.bounds, e.size))
          << round << " " << i;
      ++i;
      // A run of keys below the size limit after it.
      size_t end = i;
      const size_t want = next(12);
      while (end < keys.size() && end - i < want && keys[end].size < p.max_output_file_size) ++end;
      if (end == i) continue;
      if (!runs.SkipCounted(keys[end - 1].below, keys[end - 1].bounds)) {
        ++refused;
        continue;  // the keys go one by one
      }
      ++taken;
      for (; i < end; ++i) {
        const Key& r = keys[i];
        ASSERT_FALSE(one.ShouldStopBeforeCounted(r.same, r.below, r.bounds, r.size))
            << round << " " << i;
      }
    }
  }
  EXPECT_GT(taken, 1000);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace accelkv
