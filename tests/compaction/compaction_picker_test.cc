// CompactionPicker as a pure function: an LSM shape (hand-built file
// metadata in a Version) in, the expected compaction out.
#include "compaction/compaction_picker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "accelkv/comparator.h"
#include "compaction/compaction_test_util.h"
#include "compaction/subcompaction_boundaries.h"

namespace accelkv {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// One file of a shape: level, number, user-key range, size in KiB. The
// number doubles as its sequence number, so a higher number is newer.
struct F {
  int level;
  uint64_t number;
  const char* smallest;
  const char* largest;
  uint64_t kib;
};

// Deletes a Version through its reference count.
struct VersionUnref {
  void operator()(Version* v) const { v->Unref(); }
};
using VersionPtr = std::unique_ptr<Version, VersionUnref>;

class CompactionPickerTest : public testing::Test {
 protected:
  CompactionPickerTest() { SetLevels(7); }

  void SetLevels(int levels) {
    options_.num_levels = levels;
    options_.level0_file_num_compaction_trigger = 4;
    options_.target_file_size = kMiB;
    options_.max_bytes_for_level_base = 10 * kMiB;
    options_.max_bytes_for_level_multiplier = 10;
  }

  VersionPtr MakeVersion(const std::vector<F>& shape) {
    std::vector<LevelFiles> files(options_.num_levels);
    for (const F& f : shape) {
      files[f.level].push_back(
          test::MakeFile(f.number, f.smallest, f.largest, f.kib << 10, f.number, f.number));
    }
    std::sort(files[0].begin(), files[0].end(), [](const FileMetaPtr& a, const FileMetaPtr& b) {
      return a->largest_seqno != b->largest_seqno ? a->largest_seqno > b->largest_seqno
                                                  : a->number > b->number;
    });
    for (int level = 1; level < options_.num_levels; level++) {
      std::sort(files[level].begin(), files[level].end(),
                [this](const FileMetaPtr& a, const FileMetaPtr& b) {
                  return icmp_.Compare(a->smallest.Encode(), b->smallest.Encode()) < 0;
                });
    }
    auto* v = new Version(&options_, &icmp_, nullptr, std::move(files));
    v->Ref();
    return VersionPtr(v);
  }

  // "L0->L1 l0-file-count: 1,2 + 5 gp=7 trivial": input numbers sorted.
  static std::string Describe(const Compaction* c) {
    if (c == nullptr) return "none";
    auto sorted = [](std::vector<FileMetaPtr> files) {
      std::sort(files.begin(), files.end(),
                [](const FileMetaPtr& a, const FileMetaPtr& b) { return a->number < b->number; });
      return test::Numbers(files);
    };
    std::ostringstream out;
    out << "L" << c->level() << "->L" << c->output_level() << " "
        << CompactionReasonName(c->reason()) << ": " << sorted(c->inputs(0)) << " + "
        << sorted(c->inputs(1));
    if (!c->grandparents().empty()) out << " gp=" << sorted(c->grandparents());
    if (c->IsTrivialMove()) out << " trivial";
    return out.str();
  }

  // Pointers: level -> user key of the compact pointer.
  std::string Pick(const std::vector<F>& shape, std::map<int, std::string> pointers = {},
                   const std::vector<const Compaction*>& running = {}) {
    VersionPtr v = MakeVersion(shape);
    std::vector<std::string> p(options_.num_levels);
    for (const auto& [level, key] : pointers) {
      p[level] = InternalKey(key, 1, ValueType::kValue).Encode().ToString();
    }
    CompactionPicker picker(&options_, &icmp_);
    return Describe(picker.Pick(*v, running, p).get());
  }

  Options options_;
  InternalKeyComparator icmp_{BytewiseComparator()};
};

struct PickCase {
  const char* name;
  std::vector<F> shape;
  std::map<int, std::string> pointers;
  const char* expected;
};

TEST_F(CompactionPickerTest, Table) {
  const std::vector<PickCase> cases = {
      {"empty", {}, {}, "none"},
      {"l0 below trigger",
       {{0, 1, "a", "c", 10}, {0, 2, "a", "c", 10}, {0, 3, "a", "c", 10}},
       {},
       "none"},
      {"l0 trigger: transitive overlap plus L1 overlap",
       {{0, 1, "a", "c", 10},
        {0, 2, "b", "d", 10},
        {0, 3, "c", "e", 10},
        {0, 4, "x", "y", 10},
        {1, 10, "a", "b", 100},
        {1, 11, "d", "f", 100},
        {1, 12, "g", "h", 100}},
       {},
       "L0->L1 l0-file-count: 1,2,3 + 10,11"},
      {"l0 disjoint: the oldest file alone, a trivial move",
       {{0, 1, "a", "b", 10}, {0, 2, "c", "d", 10}, {0, 3, "e", "f", 10}, {0, 4, "g", "h", 10}},
       {},
       "L0->L1 l0-file-count: 1 +  trivial"},
      {"l0 expansion pulls no more L1 files",
       {{0, 1, "a", "b", 10},
        {0, 2, "c", "d", 10},
        {0, 3, "x", "y", 10},
        {0, 4, "z", "z", 10},
        {1, 10, "a", "d", 100}},
       {},
       "L0->L1 l0-file-count: 1,2 + 10"},
      {"l0 expansion refused when it pulls more L1 files",
       {{0, 1, "a", "b", 10},
        {0, 2, "c", "e", 10},
        {0, 3, "x", "y", 10},
        {0, 4, "z", "z", 10},
        {1, 10, "a", "d", 100},
        {1, 11, "e", "f", 100}},
       {},
       "L0->L1 l0-file-count: 1 + 10"},
      {"l0 expansion refused above 25 target files",
       {{0, 1, "a", "b", 10},
        {0, 2, "c", "d", 30 << 10},
        {0, 3, "x", "y", 10},
        {0, 4, "z", "z", 10},
        {1, 10, "a", "d", 100}},
       {},
       "L0->L1 l0-file-count: 1 + 10"},
      {"l1 over its target: first file and its L2 overlap, L3 grandparents",
       {{1, 20, "a", "b", 6 << 10},
        {1, 21, "c", "d", 6 << 10},
        {2, 30, "a", "a", 1 << 10},
        {2, 31, "c", "c", 1 << 10},
        {3, 40, "a", "a", 10},
        {3, 41, "b", "b", 10},
        {3, 42, "c", "c", 10}},
       {},
       "L1->L2 level-size: 20 + 30 gp=40,41"},
      {"l1 compact pointer: the next file",
       {{1, 20, "a", "b", 6 << 10},
        {1, 21, "c", "d", 6 << 10},
        {2, 30, "a", "a", 1 << 10},
        {2, 31, "c", "c", 1 << 10}},
       {{1, "b"}},
       "L1->L2 level-size: 21 + 31"},
      {"l1 compact pointer past the last file wraps around",
       {{1, 20, "a", "b", 6 << 10},
        {1, 21, "c", "d", 6 << 10},
        {2, 30, "a", "a", 1 << 10},
        {2, 31, "c", "c", 1 << 10}},
       {{1, "d"}},
       "L1->L2 level-size: 20 + 30"},
      {"l1 expansion to a neighbour sharing the L2 file",
       {{1, 20, "a", "b", 6 << 10}, {1, 21, "c", "d", 6 << 10}, {2, 30, "a", "d", 1 << 10}},
       {},
       "L1->L2 level-size: 20,21 + 30"},
      {"l1 trivial move",
       {{1, 20, "a", "b", 6 << 10}, {1, 21, "c", "d", 6 << 10}, {3, 40, "a", "b", 10 << 10}},
       {},
       "L1->L2 level-size: 20,21 +  gp=40 trivial"},
      {"l1 no trivial move over big grandparents",
       {{1, 20, "a", "b", 6 << 10}, {1, 21, "c", "d", 6 << 10}, {3, 40, "a", "b", 11 << 10}},
       {},
       "L1->L2 level-size: 20 +  gp=40"},
      {"the highest score first: L1 (2.4) over L0 (1.25)",
       {{0, 1, "a", "b", 10},
        {0, 2, "a", "b", 10},
        {0, 3, "a", "b", 10},
        {0, 4, "a", "b", 10},
        {0, 5, "a", "b", 10},
        {1, 20, "a", "b", 12 << 10},
        {1, 21, "c", "d", 12 << 10}},
       {},
       "L1->L2 level-size: 20,21 +  trivial"},
      {"the highest score first: L0 (2) over L1 (1.2)",
       {{0, 1, "a", "b", 10},
        {0, 2, "a", "b", 10},
        {0, 3, "a", "b", 10},
        {0, 4, "a", "b", 10},
        {0, 5, "a", "b", 10},
        {0, 6, "a", "b", 10},
        {0, 7, "a", "b", 10},
        {0, 8, "a", "b", 10},
        {1, 20, "a", "b", 6 << 10},
        {1, 21, "c", "d", 6 << 10}},
       {},
       "L0->L1 l0-file-count: 1,2,3,4,5,6,7,8 + 20"},
      {"l2 over its target (100 MiB)",
       {{2, 30, "a", "b", 60 << 10},
        {2, 31, "c", "d", 60 << 10},
        {3, 40, "c", "c", 10},
        {3, 41, "a", "a", 10}},
       {{2, "b"}},
       "L2->L3 level-size: 31 + 40"},
      {"min overlap ratio: the file with no overlap below moves first, whatever the pointer",
       {{1, 20, "a", "b", 6 << 10},
        {1, 21, "c", "d", 6 << 10},
        {1, 22, "e", "f", 6 << 10},
        {2, 30, "a", "a", 1 << 10},
        {2, 31, "e", "e", 1 << 10}},
       {{1, "f"}},
       "L1->L2 level-size: 21 +  trivial"},
      {"a trivial move grows over neighbours with nothing below their range",
       {{1, 20, "a", "b", 6 << 10},
        {1, 21, "c", "d", 6 << 10},
        {1, 22, "e", "f", 6 << 10},
        {1, 23, "g", "h", 6 << 10},
        {2, 30, "e", "e", 1 << 10}},
       {},
       "L1->L2 level-size: 20,21 +  trivial"},
      {"a trivial move does not grow over a gap holding a file below",
       {{1, 20, "a", "b", 6 << 10}, {1, 21, "e", "f", 6 << 10}, {2, 30, "c", "c", 1 << 10}},
       {},
       "L1->L2 level-size: 20 +  trivial"},
      {"a trivial move grows up to 25 target files",
       {{1, 20, "a", "b", 10 << 10},
        {1, 21, "c", "d", 10 << 10},
        {1, 22, "e", "f", 10 << 10},
        {2, 30, "x", "x", 1 << 10}},
       {},
       "L1->L2 level-size: 20,21 +  trivial"},
      {"min overlap ratio: fewer bytes below per byte pushed down wins",
       {{1, 20, "a", "b", 6 << 10},
        {1, 21, "c", "d", 6 << 10},
        {2, 30, "a", "a", 4 << 10},
        {2, 31, "c", "c", 1 << 10}},
       {},
       "L1->L2 level-size: 21 + 31"},
      {"the last level is never compacted by score", {{6, 60, "a", "z", 100 << 20}}, {}, "none"},
  };
  for (const PickCase& pc : cases) {
    EXPECT_EQ(pc.expected, Pick(pc.shape, pc.pointers)) << pc.name;
  }
}

TEST_F(CompactionPickerTest, SecondToLastLevelOutputsToTheLastLevel) {
  SetLevels(3);
  EXPECT_EQ("L1->L2 level-size: 20 + 30",
            Pick({{1, 20, "a", "b", 12 << 10}, {2, 30, "a", "b", 10}}));
  EXPECT_EQ("none", Pick({{2, 30, "a", "z", 100 << 20}}));
}

TEST_F(CompactionPickerTest, CompactionParameters) {
  VersionPtr v = MakeVersion({{1, 20, "c", "f", 12 << 10},
                              {2, 30, "d", "e", 10},
                              {3, 40, "a", "b", 10},
                              {3, 41, "e", "g", 10},
                              {4, 50, "f", "f", 10},
                              {5, 60, "x", "y", 10}});
  CompactionPicker picker(&options_, &icmp_);
  auto c = picker.Pick(*v, {}, std::vector<std::string>(7));
  ASSERT_NE(nullptr, c);
  EXPECT_EQ("L1->L2 level-size: 20 + 30 gp=41", Describe(c.get()));
  EXPECT_EQ(kMiB, c->max_output_file_size());
  EXPECT_EQ(10 * kMiB, c->max_grandparent_overlap_bytes());
  EXPECT_EQ("c", c->smallest().user_key().ToString());
  EXPECT_EQ("f", c->largest().user_key().ToString());
  EXPECT_FALSE(c->IsBottommost());
  EXPECT_TRUE(c->IsBaseLevelForKey("c"));
  EXPECT_TRUE(c->IsBaseLevelForKey("d"));   // L2 is the output level itself
  EXPECT_FALSE(c->IsBaseLevelForKey("e"));  // L3 file 41
  EXPECT_FALSE(c->IsBaseLevelForKey("f"));  // L3 file 41, L4 file 50
  EXPECT_EQ(InternalKey("f", 20, ValueType::kValue).Encode().ToString(),
            CompactionPicker::NextCompactPointer(*c));
}

TEST_F(CompactionPickerTest, OnlyOneLevel0CompactionAtATime) {
  // L0 scores 1.5, L1 1.2.
  const std::vector<F> shape = {{0, 1, "a", "b", 10},       {0, 2, "c", "d", 10},
                                {0, 3, "e", "f", 10},       {0, 4, "g", "h", 10},
                                {0, 5, "i", "j", 10},       {0, 6, "k", "l", 10},
                                {1, 20, "a", "b", 6 << 10}, {1, 21, "x", "y", 6 << 10}};
  VersionPtr v = MakeVersion(shape);
  CompactionPicker picker(&options_, &icmp_);
  const std::vector<std::string> pointers(7);
  auto first = picker.Pick(*v, {}, pointers);
  ASSERT_EQ("L0->L1 l0-file-count: 1 + 20", Describe(first.get()));
  // L0 is busy; L1 (1.2) is next, and its first free file is 21.
  auto second = picker.Pick(*v, {first.get()}, pointers);
  EXPECT_EQ("L1->L2 level-size: 21 +  trivial", Describe(second.get()));
  // Both running: nothing else to do.
  EXPECT_EQ("none", Describe(picker.Pick(*v, {first.get(), second.get()}, pointers).get()));
}

TEST_F(CompactionPickerTest, BusyFilesAreSkippedRoundRobin) {
  VersionPtr v = MakeVersion({{1, 20, "a", "b", 4 << 10},
                              {1, 21, "c", "d", 4 << 10},
                              {1, 22, "e", "f", 4 << 10},
                              {2, 30, "a", "a", 10},
                              {2, 32, "c", "c", 10},
                              {2, 31, "e", "e", 10}});
  CompactionPicker picker(&options_, &icmp_);
  const std::vector<std::string> pointers(7);
  auto first = picker.Pick(*v, {}, pointers);
  ASSERT_EQ("L1->L2 level-size: 20 + 30", Describe(first.get()));
  auto second = picker.Pick(*v, {first.get()}, pointers);
  ASSERT_EQ("L1->L2 level-size: 21 + 32", Describe(second.get()));
  auto third = picker.Pick(*v, {first.get(), second.get()}, pointers);
  ASSERT_EQ("L1->L2 level-size: 22 + 31", Describe(third.get()));
  EXPECT_EQ("none",
            Describe(picker.Pick(*v, {first.get(), second.get(), third.get()}, pointers).get()));
}

TEST_F(CompactionPickerTest, OutputLevelFileOfARunningCompactionIsBusy) {
  // A running L2->L3 compaction holds L2 file 30, which L1 file 20 overlaps.
  VersionPtr v = MakeVersion({{1, 20, "a", "b", 6 << 10},
                              {1, 21, "c", "d", 6 << 10},
                              {2, 30, "a", "b", 10},
                              {2, 31, "c", "d", 10}});
  Compaction::Params rp;
  rp.level = 2;
  rp.output_level = 3;
  rp.inputs[0] = {v->files(2)[0]};
  Compaction running(rp, &icmp_);
  CompactionPicker picker(&options_, &icmp_);
  EXPECT_EQ("L1->L2 level-size: 21 + 31",
            Describe(picker.Pick(*v, {&running}, std::vector<std::string>(7)).get()));
}

TEST_F(CompactionPickerTest, OverlappingOutputRangeIntoTheSameLevelConflicts) {
  VersionPtr v = MakeVersion({{1, 20, "c", "d", 6 << 10}, {1, 21, "m", "n", 6 << 10}});
  // A running compaction (picked from an older version) writes [a .. e] into
  // L2 from files the current version no longer holds.
  Compaction::Params rp;
  rp.level = 1;
  rp.output_level = 2;
  rp.inputs[0] = {test::MakeFile(5, "a", "e", 10)};
  Compaction running(rp, &icmp_);
  CompactionPicker picker(&options_, &icmp_);
  EXPECT_EQ("L1->L2 level-size: 21 +  trivial",
            Describe(picker.Pick(*v, {&running}, std::vector<std::string>(7)).get()));
  // The same range into another level does not conflict.
  Compaction::Params other = rp;
  other.level = 2;
  other.output_level = 3;
  Compaction running3(other, &icmp_);
  EXPECT_EQ("L1->L2 level-size: 20,21 +  trivial",
            Describe(picker.Pick(*v, {&running3}, std::vector<std::string>(7)).get()));
}

TEST_F(CompactionPickerTest, PickRangeTakesBoundedPieces) {
  std::vector<F> shape;
  std::vector<std::string> keys;
  for (int i = 0; i < 30; i++) keys.push_back("k" + std::to_string(10 + i));
  for (int i = 0; i < 30; i++) {
    shape.push_back({1, static_cast<uint64_t>(100 + i), keys[i].c_str(), keys[i].c_str(), 1024});
  }
  shape.push_back({2, 200, "k10", "k50", 10});
  VersionPtr v = MakeVersion(shape);
  CompactionPicker picker(&options_, &icmp_);
  // Unbounded: the first 25 files (25 MiB).
  auto c = picker.PickRange(*v, 1, nullptr, nullptr, {});
  ASSERT_NE(nullptr, c);
  EXPECT_EQ(CompactionReason::kManual, c->reason());
  EXPECT_EQ(25u, c->num_input_files(0));
  EXPECT_EQ("k10", c->smallest().user_key().ToString());
  EXPECT_EQ("L1->L2 manual: ", Describe(c.get()).substr(0, 15));
  // A range: only its files.
  const InternalKey begin("k15", kMaxSequenceNumber, kValueTypeForSeek);
  const InternalKey end("k17", 0, ValueType::kDeletion);
  c = picker.PickRange(*v, 1, &begin, &end, {});
  EXPECT_EQ("L1->L2 manual: 105,106,107 + 200", Describe(c.get()));
  // A busy file refuses the piece.
  EXPECT_EQ(nullptr, picker.PickRange(*v, 1, &begin, &end, {c.get()}));
  // Nothing in range, or no level below.
  const InternalKey past("z", kMaxSequenceNumber, kValueTypeForSeek);
  EXPECT_EQ(nullptr, picker.PickRange(*v, 1, &past, nullptr, {}));
  EXPECT_EQ(nullptr, picker.PickRange(*v, 3, nullptr, nullptr, {}));
  EXPECT_EQ(nullptr, picker.PickRange(*v, 6, nullptr, nullptr, {}));
  EXPECT_EQ(nullptr, picker.PickRange(*v, -1, nullptr, nullptr, {}));
}

TEST_F(CompactionPickerTest, PickRangeLevel0TakesEveryOverlappingFile) {
  VersionPtr v = MakeVersion(
      {{0, 1, "a", "c", 10}, {0, 2, "b", "e", 10}, {0, 3, "x", "y", 10}, {1, 20, "a", "a", 10}});
  CompactionPicker picker(&options_, &icmp_);
  const InternalKey begin("a", kMaxSequenceNumber, kValueTypeForSeek);
  const InternalKey end("b", 0, ValueType::kDeletion);
  auto c = picker.PickRange(*v, 0, &begin, &end, {});
  EXPECT_EQ("L0->L1 manual: 1,2 + 20", Describe(c.get()));
  // A single file with nothing below is still rewritten (no trivial move).
  const InternalKey xb("x", kMaxSequenceNumber, kValueTypeForSeek);
  c = picker.PickRange(*v, 0, &xb, nullptr, {});
  EXPECT_EQ("L0->L1 manual: 3 + ", Describe(c.get()));
}

TEST_F(CompactionPickerTest, MaxSubcompactionsSetsTheJobsBoundaries) {
  const std::vector<F> shape = {{0, 1, "a", "z", 100},  {0, 2, "b", "y", 100},
                                {0, 3, "c", "x", 100},  {0, 4, "d", "w", 100},
                                {1, 10, "a", "e", 100}, {1, 11, "f", "j", 100},
                                {1, 12, "k", "o", 100}, {1, 13, "p", "z", 100}};
  VersionPtr v = MakeVersion(shape);
  CompactionPicker one(&options_, &icmp_);
  auto c = one.Pick(*v, {}, std::vector<std::string>(options_.num_levels));
  ASSERT_NE(nullptr, c);
  EXPECT_TRUE(c->subcompaction_boundaries().empty());  // default 1
  options_.max_subcompactions = 4;
  CompactionPicker four(&options_, &icmp_);
  c = four.Pick(*v, {}, std::vector<std::string>(options_.num_levels));
  ASSERT_NE(nullptr, c);
  EXPECT_EQ(3u, c->subcompaction_boundaries().size());
  EXPECT_EQ(GenSubcompactionBoundaries(c->params(), BytewiseComparator(), 4),
            c->subcompaction_boundaries());
}

}  // namespace
}  // namespace accelkv
