#include "memtable/btree_index.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "accelkv/comparator.h"
#include "memtable/memtable.h"
#include "testutil/test_util.h"
#include "util/coding.h"
#include "util/internal_key.h"
#include "util/random.h"

namespace accelkv {
namespace {

// Entries in MemTable's encoding, kept at stable addresses.
class Entries {
 public:
  const char* Add(const std::string& user_key, SequenceNumber seq, ValueType type) {
    std::string ikey;
    AppendInternalKey(&ikey, ParsedInternalKey(user_key, seq, type));
    std::string e;
    PutVarint32(&e, static_cast<uint32_t>(ikey.size()));
    e += ikey;
    PutVarint32(&e, 1);
    e += 'v';
    store_.push_back(std::move(e));
    return store_.back().data();
  }

 private:
  std::deque<std::string> store_;
};

std::string IKey(const char* entry) { return MemTable::KeyComparator::Decode(entry).ToString(); }

const InternalKeyComparator& Icmp() {
  static const InternalKeyComparator icmp(BytewiseComparator());
  return icmp;
}

// User keys that stress the inline 16-byte prefix: shared prefixes around
// the 8- and 16-byte words, keys that are prefixes of others, trailing and
// embedded zero bytes, empty keys, long keys that differ only late.
std::string TrickyKey(Random* rnd) {
  static const char* const kStems[] = {"", "a", "abcdefgh", "abcdefghijklmnop",
                                       "abcdefghijklmnopq"};
  std::string k = kStems[rnd->Uniform(5)];
  const uint64_t extra = rnd->Skewed(5);
  for (uint64_t i = 0; i < extra; i++) {
    const uint64_t c = rnd->Uniform(4);
    k.push_back(c == 0 ? '\0' : c == 1 ? '\xff' : static_cast<char>('a' + rnd->Uniform(3)));
  }
  if (rnd->OneIn(20)) k.append(1000, 'z');  // a long key
  return k;
}

// Checks every entry in order both ways, and seeks against the model.
void CheckAgainstModel(const BTreeIndex& tree, std::vector<std::string> model, Random* rnd) {
  auto less = [](const std::string& a, const std::string& b) { return Icmp().Compare(a, b) < 0; };
  std::sort(model.begin(), model.end(), less);
  BTreeIndex::Iterator it(&tree);
  it.SeekToFirst();
  for (const std::string& k : model) {
    ASSERT_TRUE(it.Valid());
    ASSERT_EQ(k, IKey(it.key()));
    it.Next();
  }
  EXPECT_FALSE(it.Valid());
  it.SeekToLast();
  for (auto k = model.rbegin(); k != model.rend(); ++k) {
    ASSERT_TRUE(it.Valid());
    ASSERT_EQ(*k, IKey(it.key()));
    it.Prev();
  }
  EXPECT_FALSE(it.Valid());
  for (int i = 0; i < 2000; i++) {
    std::string target;
    const std::string user_key = rnd->OneIn(2) && !model.empty()
                                     ? ExtractUserKey(model[rnd->Uniform(model.size())]).ToString()
                                     : TrickyKey(rnd);
    AppendInternalKey(&target,
                      ParsedInternalKey(user_key, rnd->Uniform(1000),
                                        rnd->OneIn(2) ? ValueType::kValue : ValueType::kDeletion));
    auto lb = std::lower_bound(model.begin(), model.end(), target, less);
    it.Seek(target);
    const char* found = tree.FindFirstAtLeast(target);
    if (lb == model.end()) {
      ASSERT_FALSE(it.Valid());
      ASSERT_EQ(nullptr, found);
    } else {
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(*lb, IKey(it.key()));
      ASSERT_EQ(*lb, IKey(found));
      // Prev from a seek: the last entry < target.
      it.Prev();
      ASSERT_EQ(lb != model.begin(), it.Valid());
      if (it.Valid()) {
        ASSERT_EQ(*std::prev(lb), IKey(it.key()));
      }
    }
    auto ub = std::upper_bound(model.begin(), model.end(), target, less);
    it.SeekForPrev(target);
    if (ub == model.begin()) {
      ASSERT_FALSE(it.Valid());
    } else {
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(*std::prev(ub), IKey(it.key()));
      it.Next();
      ASSERT_EQ(ub != model.end(), it.Valid());
      if (it.Valid()) {
        ASSERT_EQ(*ub, IKey(it.key()));
      }
    }
  }
}

TEST(BTreeIndexTest, Empty) {
  BTreeIndex tree(false);
  BTreeIndex::Iterator it(&tree);
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  it.SeekToLast();
  EXPECT_FALSE(it.Valid());
  std::string target;
  AppendInternalKey(&target, ParsedInternalKey("k", 5, ValueType::kValue));
  it.Seek(target);
  EXPECT_FALSE(it.Valid());
  it.SeekForPrev(target);
  EXPECT_FALSE(it.Valid());
  EXPECT_EQ(nullptr, tree.FindFirstAtLeast(target));
  EXPECT_GT(tree.MemoryUsage(), 0u);  // the root leaf
}

// Random keys of every shape, many versions of some, in random order: the
// tree's order is the internal-key order, both ways, with seeks.
TEST(BTreeIndexTest, RandomKeysAgainstModel) {
  Random rnd(test::TestSeed());
  for (bool huge : {false, true}) {
    BTreeIndex tree(huge);
    Entries entries;
    std::set<std::string> seen;
    std::vector<std::string> model;
    std::vector<std::string> user_keys;
    for (int i = 0; i < 4000; i++) user_keys.push_back(TrickyKey(&rnd));
    for (int i = 0; i < 20000; i++) {
      const std::string& k = user_keys[rnd.Uniform(user_keys.size())];
      const SequenceNumber seq = rnd.Uniform(1000);
      const ValueType type = rnd.OneIn(4) ? ValueType::kDeletion : ValueType::kValue;
      const char* e = entries.Add(k, seq, type);
      if (!seen.insert(IKey(e)).second) continue;  // an equal internal key is not allowed
      tree.Insert(e);
      model.push_back(IKey(e));
    }
    CheckAgainstModel(tree, model, &rnd);
  }
}

// Ascending inserts fill leaves (the append split); descending ones split
// at the front. Both keep the order.
TEST(BTreeIndexTest, AscendingAndDescendingInserts) {
  Random rnd(test::TestSeed());
  for (bool ascending : {true, false}) {
    BTreeIndex tree(false);
    Entries entries;
    std::vector<std::string> model;
    const int n = 30000;
    for (int i = 0; i < n; i++) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "key%016d", ascending ? i : n - i);
      const char* e = entries.Add(buf, 7, ValueType::kValue);
      tree.Insert(e);
      model.push_back(IKey(e));
    }
    CheckAgainstModel(tree, model, &rnd);
    if (ascending) {
      // Full leaves: about 512 bytes a leaf over 19 entries, plus inner nodes.
      EXPECT_LT(tree.MemoryUsage(), static_cast<size_t>(n) / 19 * 640 + 64 * 1024);
    }
  }
}

// Versions of one user key: the newest first, and a seek by (key, snapshot)
// lands on the newest version at or below the snapshot.
TEST(BTreeIndexTest, VersionsOfOneKeyNewestFirst) {
  BTreeIndex tree(false);
  Entries entries;
  for (SequenceNumber seq = 1; seq <= 500; seq++) {
    tree.Insert(entries.Add("same-user-key-longer-than-16", seq * 2, ValueType::kValue));
    tree.Insert(entries.Add("short", seq * 2, ValueType::kValue));
  }
  for (SequenceNumber snap : {SequenceNumber{1}, SequenceNumber{2}, SequenceNumber{501},
                              SequenceNumber{1000}, SequenceNumber{5000}}) {
    for (const char* key : {"same-user-key-longer-than-16", "short"}) {
      LookupKey lk(key, snap);
      const char* e = tree.FindFirstAtLeast(lk.internal_key());
      const SequenceNumber want = std::min<SequenceNumber>(snap / 2 * 2, 1000);
      if (e == nullptr) {
        EXPECT_EQ(0u, want);
        continue;
      }
      ParsedInternalKey parsed;
      ASSERT_TRUE(ParseInternalKey(MemTable::KeyComparator::Decode(e), &parsed));
      if (want == 0) {
        EXPECT_NE(key, parsed.user_key.ToString());  // no version visible
      } else {
        EXPECT_EQ(key, parsed.user_key.ToString());
        EXPECT_EQ(want, parsed.sequence);
      }
    }
  }
}

// Up to steps moves of it (forward or backward): the number of keys not
// strictly after (or before) the one before them.
int OrderFailures(BTreeIndex::Iterator* it, bool forward, int steps) {
  int failures = 0;
  std::string prev;
  for (int i = 0; it->Valid() && i < steps; forward ? it->Next() : it->Prev(), i++) {
    const std::string cur = IKey(it->key());
    const int c = prev.empty() ? (forward ? -1 : 1) : Icmp().Compare(prev, cur);
    if (forward ? c >= 0 : c <= 0) failures++;
    prev = cur;
  }
  return failures;
}

// Writer thread w inserts made[w] in order while two reader threads call
// read_once(it, returned) until the writers are done; returned() is the
// internal key of an entry whose insert has returned (empty if none yet), and
// read_once returns the failures it saw. Then the tree must hold exactly the
// entries made.
using ReadOnce =
    std::function<int(BTreeIndex::Iterator*, const std::function<std::string()>& returned)>;
void InsertBesideReaders(BTreeIndex* tree, const std::vector<std::vector<const char*>>& made,
                         uint64_t reader_seed, const ReadOnce& read_once) {
  const size_t writers = made.size();
  std::vector<std::atomic<size_t>> done(writers);
  for (auto& d : done) d.store(0);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (size_t w = 0; w < writers; w++) {
    threads.emplace_back([&, w] {
      for (size_t i = 0; i < made[w].size(); i++) {
        tree->Insert(made[w][i]);
        done[w].store(i + 1, std::memory_order_release);
      }
    });
  }
  for (uint64_t r = 0; r < 2; r++) {
    threads.emplace_back([&, r] {
      Random rnd(reader_seed + r);
      BTreeIndex::Iterator it(tree);
      const auto returned = [&]() -> std::string {
        const size_t w = rnd.Uniform(writers);
        const size_t n = done[w].load(std::memory_order_acquire);
        return n == 0 ? std::string() : IKey(made[w][rnd.Uniform(n)]);
      };
      while (!stop.load(std::memory_order_acquire)) failures += read_once(&it, returned);
    });
  }
  for (size_t w = 0; w < writers; w++) threads[w].join();
  stop.store(true, std::memory_order_release);
  for (size_t t = writers; t < threads.size(); t++) threads[t].join();
  EXPECT_EQ(0, failures.load());

  std::vector<std::string> model;
  for (const auto& list : made) {
    for (const char* e : list) model.push_back(IKey(e));
  }
  Random rnd(test::TestSeed());
  CheckAgainstModel(*tree, model, &rnd);
}

// Many threads insert at once (overlapping key ranges, so they split the
// same nodes) while readers seek and scan: every entry whose insert returned
// before a reader's seek is found by it, scans are always in order, and the
// final tree holds exactly the entries inserted.
TEST(BTreeIndexTest, ConcurrentInsertsBesideReaders) {
  constexpr int kWriters = 4;
  constexpr int kPerWriter = 20000;
  BTreeIndex tree(false);
  std::vector<Entries> entries(kWriters);
  std::vector<std::vector<const char*>> made(kWriters);
  for (int w = 0; w < kWriters; w++) {
    Random rnd(test::TestSeed() + static_cast<uint64_t>(w));
    for (int i = 0; i < kPerWriter; i++) {
      // Distinct per writer by the sequence; user keys collide across writers.
      const std::string k =
          "k" + std::to_string(rnd.Uniform(5000)) + std::string(rnd.Uniform(20), 'x');
      made[w].push_back(
          entries[w].Add(k, static_cast<SequenceNumber>(i * kWriters + w + 1), ValueType::kValue));
    }
  }
  InsertBesideReaders(&tree, made, test::TestSeed() + 100,
                      [&](BTreeIndex::Iterator* it, const auto& returned) {
                        int failures = 0;
                        // A point lookup of an entry whose insert has returned.
                        const std::string want = returned();
                        if (!want.empty()) {
                          it->Seek(want);
                          if (!it->Valid() || IKey(it->key()) != want) failures++;
                          const char* e = tree.FindFirstAtLeast(want);
                          if (e == nullptr || IKey(e) != want) failures++;
                        }
                        // A short scan forward, then back.
                        failures += OrderFailures(it, true, 200);
                        if (!it->Valid()) it->SeekToLast();
                        return failures + OrderFailures(it, false, 200);
                      });
}

// Writers append interleaved ascending keys, so they all contend for the
// rightmost leaf and split it with the append rule, while readers walk
// backwards from the end (Prev's predecessor searches across leaves that
// are splitting) and look up keys whose inserts have returned.
TEST(BTreeIndexTest, ConcurrentAppendsBesideBackwardScans) {
  constexpr int kWriters = 4;
  constexpr int kPerWriter = 15000;
  BTreeIndex tree(true);
  std::vector<Entries> entries(kWriters);
  std::vector<std::vector<const char*>> made(kWriters);
  for (int w = 0; w < kWriters; w++) {
    for (int i = 0; i < kPerWriter; i++) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "key%012d", i * kWriters + w);
      made[w].push_back(entries[w].Add(buf, 9, ValueType::kValue));
    }
  }
  InsertBesideReaders(&tree, made, test::TestSeed() + 200,
                      [&](BTreeIndex::Iterator* it, const auto& returned) {
                        int failures = 0;
                        const std::string want = returned();
                        if (!want.empty()) {
                          const char* e = tree.FindFirstAtLeast(want);
                          if (e == nullptr || IKey(e) != want) failures++;
                          it->SeekForPrev(want);
                          if (!it->Valid() || IKey(it->key()) != want) failures++;
                        }
                        it->SeekToLast();
                        return failures + OrderFailures(it, false, 300);
                      });
}

}  // namespace
}  // namespace accelkv
