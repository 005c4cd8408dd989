// ObsoleteVersionFilter: hand cases for the stripe and tombstone rules, and a
// randomized comparison against a brute-force visibility oracle.
#include "compaction/obsolete_version_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "accelkv/comparator.h"
#include "compaction/compaction_test_util.h"
#include "testutil/test_util.h"

namespace accelkv {
namespace {

using test::Entry;
using test::MakeFile;

constexpr ValueType kDel = ValueType::kDeletion;
constexpr ValueType kVal = ValueType::kValue;

class ObsoleteVersionFilterTest : public testing::Test {
 protected:
  // A compaction whose deeper level holds one file [k, k] per key in `deeper`.
  std::unique_ptr<Compaction> MakeCompaction(const std::set<std::string>& deeper) {
    Compaction::Params p;
    p.level = 1;
    p.output_level = 2;
    p.inputs[0] = {MakeFile(1, "", "\xff", 100)};
    LevelFiles files;
    uint64_t number = 100;
    for (const std::string& k : deeper) files.push_back(MakeFile(number++, k, k, 10));
    p.deeper_levels = {files};
    return std::make_unique<Compaction>(std::move(p), &icmp_);
  }

  // Runs the filter over entries (sorted here) and returns the kept ones as
  // "key@seq" (tombstones "key@seq:del").
  std::vector<std::string> Run(std::vector<Entry> entries,
                               const std::vector<SequenceNumber>& snapshots,
                               const std::set<std::string>& deeper = {}) {
    test::SortEntries(&entries);
    auto c = MakeCompaction(deeper);
    ObsoleteVersionFilter filter(BytewiseComparator(), snapshots, c.get());
    std::vector<std::string> kept;
    for (const Entry& e : entries) {
      if (filter.Keep(ParsedInternalKey(e.user_key, e.seq, e.type))) {
        kept.push_back(e.user_key + "@" + std::to_string(e.seq) + (e.type == kDel ? ":del" : ""));
      }
    }
    return kept;
  }

  InternalKeyComparator icmp_{BytewiseComparator()};
};

using Strings = std::vector<std::string>;

TEST_F(ObsoleteVersionFilterTest, NoSnapshotsKeepsOnlyTheNewestVersion) {
  EXPECT_EQ(
      Strings({"a@5", "b@9"}),
      Run({{"a", 5, kVal}, {"a", 3, kVal}, {"a", 1, kDel}, {"b", 9, kVal}, {"b", 2, kVal}}, {}));
}

TEST_F(ObsoleteVersionFilterTest, TombstoneAtTheBaseLevelIsDroppedWithWhatItHides) {
  EXPECT_EQ(Strings({"c@1"}), Run({{"b", 4, kDel}, {"b", 2, kVal}, {"c", 1, kVal}}, {}));
}

TEST_F(ObsoleteVersionFilterTest, TombstoneIsKeptWhenADeeperLevelMayHoldTheKey) {
  EXPECT_EQ(Strings({"b@4:del", "c@1"}),
            Run({{"b", 4, kDel}, {"b", 2, kVal}, {"c", 1, kVal}}, {}, {"b"}));
  // A deeper file for another key does not matter.
  EXPECT_EQ(Strings({"c@1"}), Run({{"b", 4, kDel}, {"b", 2, kVal}, {"c", 1, kVal}}, {}, {"a"}));
}

TEST_F(ObsoleteVersionFilterTest, SnapshotsSplitVersionsIntoStripes) {
  // Snapshot 3: stripes {5, 4} (above all snapshots) and {3, 2, 1} (<= 3).
  EXPECT_EQ(
      Strings({"a@5", "a@3"}),
      Run({{"a", 5, kVal}, {"a", 4, kVal}, {"a", 3, kVal}, {"a", 2, kVal}, {"a", 1, kVal}}, {3}));
  // Snapshots 2 and 4: stripes {5}, {4, 3}, {2, 1}.
  EXPECT_EQ(Strings({"a@5", "a@4", "a@2"}),
            Run({{"a", 5, kVal}, {"a", 4, kVal}, {"a", 3, kVal}, {"a", 2, kVal}, {"a", 1, kVal}},
                {2, 4}));
  // A snapshot with no version in its stripe changes nothing.
  EXPECT_EQ(Strings({"a@9"}), Run({{"a", 9, kVal}, {"a", 8, kVal}}, {3, 20}));
}

TEST_F(ObsoleteVersionFilterTest, TombstoneOutsideTheOldestStripeIsKept) {
  // Snapshot 3 sees a@2; the tombstone at 5 hides it only from later reads.
  EXPECT_EQ(Strings({"a@5:del", "a@2"}), Run({{"a", 5, kDel}, {"a", 2, kVal}}, {3}));
  // The tombstone is the newest of the oldest stripe: dropped with a@2.
  EXPECT_EQ(Strings({"a@6"}), Run({{"a", 6, kVal}, {"a", 5, kDel}, {"a", 2, kVal}}, {5}));
  // A snapshot older than every version: both versions sit in the stripe
  // above it, which is not the oldest stripe, so the tombstone stays (the
  // rule is conservative here; a@2 is shadowed either way).
  EXPECT_EQ(Strings({"a@5:del"}), Run({{"a", 5, kDel}, {"a", 2, kVal}}, {1}));
}

TEST_F(ObsoleteVersionFilterTest, SnapshotEqualToASequenceBelongsToThatStripe) {
  EXPECT_EQ(Strings({"a@4", "a@3"}), Run({{"a", 4, kVal}, {"a", 3, kVal}, {"a", 2, kVal}}, {3}));
}

TEST_F(ObsoleteVersionFilterTest, EveryUserKeyStartsFresh) {
  EXPECT_EQ(Strings({"a@7", "ab@6", "b@5:del", "c@1"}), Run({{"a", 7, kVal},
                                                             {"a", 4, kVal},
                                                             {"ab", 6, kVal},
                                                             {"b", 5, kDel},
                                                             {"b", 3, kVal},
                                                             {"c", 1, kVal}},
                                                            {}, {"b"}));
}

// --- randomized comparison with a brute-force oracle ---

struct Case {
  std::vector<Entry> job;                 // the compaction's entries (newer)
  std::vector<Entry> deeper;              // older versions in deeper levels
  std::set<std::string> deeper_files;     // keys a deeper file range covers
  std::vector<SequenceNumber> snapshots;  // ascending, distinct
};

// The value visible at sequence s, or "<none>".
std::string Visible(const std::vector<Entry>& a, const std::vector<Entry>& b,
                    const std::string& key, SequenceNumber s) {
  const Entry* best = nullptr;
  for (const auto* list : {&a, &b}) {
    for (const Entry& e : *list) {
      if (e.user_key == key && e.seq <= s && (best == nullptr || e.seq > best->seq)) best = &e;
    }
  }
  if (best == nullptr || best->type == kDel) return "<none>";
  return best->value;
}

Case RandomCase(Random* rnd) {
  Case c;
  const int num_keys = 1 + static_cast<int>(rnd->Uniform(5));
  std::set<SequenceNumber> used;
  auto fresh_seq = [&](SequenceNumber lo, SequenceNumber span) {
    SequenceNumber s;
    do {
      s = lo + rnd->Uniform(span);
    } while (!used.insert(s).second);
    return s;
  };
  for (int k = 0; k < num_keys; k++) {
    const std::string key = "k" + std::to_string(k);
    const int versions = static_cast<int>(rnd->Uniform(7));
    for (int v = 0; v < versions; v++) {
      Entry e{key, fresh_seq(101, 100), rnd->OneIn(3) ? kDel : kVal, ""};
      e.value = e.type == kVal ? "v" + std::to_string(e.seq) : "";
      c.job.push_back(e);
    }
    if (rnd->OneIn(3)) {
      const int older = 1 + static_cast<int>(rnd->Uniform(2));
      for (int v = 0; v < older; v++) {
        Entry e{key, fresh_seq(1, 100), rnd->OneIn(3) ? kDel : kVal, ""};
        e.value = e.type == kVal ? "d" + std::to_string(e.seq) : "";
        c.deeper.push_back(e);
      }
      c.deeper_files.insert(key);
    } else if (rnd->OneIn(5)) {
      c.deeper_files.insert(key);  // a deeper file range covers the key, no version
    }
  }
  std::set<SequenceNumber> snaps;
  const int num_snaps = static_cast<int>(rnd->Uniform(4));
  for (int i = 0; i < num_snaps; i++) {
    if (!c.job.empty() && rnd->OneIn(2)) {
      snaps.insert(c.job[rnd->Uniform(c.job.size())].seq);  // exactly at an entry
    } else {
      snaps.insert(1 + rnd->Uniform(220));
    }
  }
  c.snapshots.assign(snaps.begin(), snaps.end());
  test::SortEntries(&c.job);
  return c;
}

TEST_F(ObsoleteVersionFilterTest, RandomizedAgainstVisibilityOracle) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  for (int iter = 0; iter < 3000; iter++) {
    const Case cs = RandomCase(&rnd);
    auto c = MakeCompaction(cs.deeper_files);
    ObsoleteVersionFilter filter(BytewiseComparator(), cs.snapshots, c.get());
    std::vector<Entry> kept;
    for (const Entry& e : cs.job) {
      const bool keep = filter.Keep(ParsedInternalKey(e.user_key, e.seq, e.type));
      // The rule, by brute force.
      auto stripe = [&](SequenceNumber s) {
        for (SequenceNumber snap : cs.snapshots) {
          if (snap >= s) return snap;
        }
        return kMaxSequenceNumber;
      };
      bool shadowed = false;
      for (const Entry& o : cs.job) {
        if (o.user_key == e.user_key && o.seq > e.seq && stripe(o.seq) == stripe(e.seq)) {
          shadowed = true;
        }
      }
      const bool oldest = cs.snapshots.empty() || stripe(e.seq) == cs.snapshots.front();
      const bool drop_tombstone =
          e.type == kDel && oldest && cs.deeper_files.count(e.user_key) == 0;
      ASSERT_EQ(!shadowed && !drop_tombstone, keep)
          << "iter " << iter << " entry " << e.user_key << "@" << e.seq;
      if (keep) kept.push_back(e);
    }
    // Every view reads the same before and after.
    std::vector<SequenceNumber> views = cs.snapshots;
    views.push_back(kMaxSequenceNumber);
    std::set<std::string> keys;
    for (const Entry& e : cs.job) keys.insert(e.user_key);
    for (const Entry& e : cs.deeper) keys.insert(e.user_key);
    for (const std::string& key : keys) {
      for (SequenceNumber s : views) {
        ASSERT_EQ(Visible(cs.job, cs.deeper, key, s), Visible(kept, cs.deeper, key, s))
            << "iter " << iter << " key " << key << " view " << s;
      }
    }
    // Full garbage collection when nothing can see or hold older data.
    if (cs.snapshots.empty()) {
      std::map<std::string, int> per_key;
      for (const Entry& e : kept) {
        per_key[e.user_key]++;
        if (cs.deeper_files.count(e.user_key) == 0) {
          ASSERT_NE(kDel, e.type) << "iter " << iter;
        }
      }
      for (const auto& [key, n] : per_key) ASSERT_EQ(1, n) << "iter " << iter << " " << key;
    }
  }
}

}  // namespace
}  // namespace accelkv
