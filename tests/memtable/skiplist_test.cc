#include "memtable/skiplist.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "testutil/test_util.h"
#include "util/arena.h"
#include "util/coding.h"
#include "util/random.h"

namespace accelkv {
namespace {

// Keys are 8-byte little-endian integers.
struct U64Cmp {
  using DecodedKey = uint64_t;
  static uint64_t Decode(const char* key) { return DecodeFixed64(key); }
  int operator()(const char* a, const uint64_t& b) const {
    const uint64_t x = Decode(a);
    return x < b ? -1 : (x > b ? 1 : 0);
  }
};
using U64List = SkipList<U64Cmp>;

void InsertU64(U64List* list, uint64_t k) {
  char* buf = list->AllocateKey(sizeof(k));
  EncodeFixed64(buf, k);
  list->Insert(buf);
}

// Keys of any length: varint32 length, then the bytes, in bytewise order.
struct StringCmp {
  using DecodedKey = Slice;
  static Slice Decode(const char* key) {
    uint32_t len = 0;
    const char* p = GetVarint32Ptr(key, key + 5, &len);
    return Slice(p, len);
  }
  int operator()(const char* a, const Slice& b) const { return Decode(a).compare(b); }
};
using StringList = SkipList<StringCmp>;

void InsertString(StringList* list, const std::string& k) {
  const size_t n = static_cast<size_t>(VarintLength(k.size())) + k.size();
  char* buf = list->AllocateKey(n);
  char* p = EncodeVarint32(buf, static_cast<uint32_t>(k.size()));
  if (!k.empty()) std::memcpy(p, k.data(), k.size());
  list->Insert(buf);
}

TEST(SkipListTest, Empty) {
  Arena arena;
  U64List list(U64Cmp(), &arena);
  EXPECT_FALSE(list.Contains(10));
  EXPECT_EQ(nullptr, list.FindFirstAtLeast(0));
  U64List::Iterator it(&list);
  EXPECT_FALSE(it.Valid());
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  it.SeekToLast();
  EXPECT_FALSE(it.Valid());
  it.Seek(100);
  EXPECT_FALSE(it.Valid());
  it.SeekForPrev(100);
  EXPECT_FALSE(it.Valid());
}

TEST(SkipListTest, RandomInsertsMatchStdSet) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  constexpr uint64_t kRange = 5000;
  Arena arena;
  U64List list(U64Cmp(), &arena);
  std::set<uint64_t> model;
  for (int i = 0; i < 2000; i++) {
    const uint64_t k = rnd.Uniform(kRange);
    if (model.insert(k).second) InsertU64(&list, k);
  }

  for (uint64_t k = 0; k < kRange; k++) {
    ASSERT_EQ(model.count(k) == 1, list.Contains(k)) << k;
  }

  // Forward.
  U64List::Iterator it(&list);
  it.SeekToFirst();
  for (uint64_t want : model) {
    ASSERT_TRUE(it.Valid());
    ASSERT_EQ(want, U64Cmp::Decode(it.key()));
    it.Next();
  }
  EXPECT_FALSE(it.Valid());

  // Backward.
  it.SeekToLast();
  for (auto m = model.rbegin(); m != model.rend(); ++m) {
    ASSERT_TRUE(it.Valid());
    ASSERT_EQ(*m, U64Cmp::Decode(it.key()));
    it.Prev();
  }
  EXPECT_FALSE(it.Valid());

  // Seek / SeekForPrev to every target in and around the range, then a few
  // steps either way.
  for (uint64_t target = 0; target <= kRange; target += 7) {
    auto lb = model.lower_bound(target);
    it.Seek(target);
    if (lb == model.end()) {
      ASSERT_FALSE(it.Valid());
    } else {
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(*lb, U64Cmp::Decode(it.key()));
      ASSERT_EQ(*lb, U64Cmp::Decode(list.FindFirstAtLeast(target)));
      auto m = lb;
      for (int step = 0; step < 3 && it.Valid(); step++) {
        ASSERT_EQ(*m, U64Cmp::Decode(it.key()));
        it.Next();
        ++m;
      }
      ASSERT_EQ(m == model.end(), !it.Valid());
    }

    auto ub = model.upper_bound(target);  // SeekForPrev: the last key <= target
    it.SeekForPrev(target);
    if (ub == model.begin()) {
      ASSERT_FALSE(it.Valid());
    } else {
      auto want = std::prev(ub);
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(*want, U64Cmp::Decode(it.key()));
      for (int step = 0; step < 3; step++) {
        ASSERT_TRUE(it.Valid());
        ASSERT_EQ(*want, U64Cmp::Decode(it.key()));
        it.Prev();
        if (want == model.begin()) {
          ASSERT_FALSE(it.Valid());
          break;
        }
        --want;
      }
    }
  }
}

TEST(SkipListTest, VariableLengthKeysIncludingEmptyAndLarge) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  Arena arena;
  StringList list(StringCmp(), &arena);
  std::set<std::string> model;
  // The empty key, keys larger than an arena block, and odd sizes that would
  // misalign a following node if nodes were not aligned.
  std::vector<std::string> keys = {"", std::string(1, '\0'), std::string(100 * 1024, 'x'),
                                   std::string(17 * 1024, 'y')};
  for (int i = 0; i < 500; i++) keys.push_back(test::RandomString(&rnd, rnd.Skewed(10)));
  for (const std::string& k : keys) {
    if (model.insert(k).second) InsertString(&list, k);
  }
  for (const std::string& k : model) ASSERT_TRUE(list.Contains(k));
  EXPECT_FALSE(list.Contains("not inserted, long enough to be absent from the random keys"));

  StringList::Iterator it(&list);
  it.SeekToFirst();
  for (const std::string& want : model) {
    ASSERT_TRUE(it.Valid());
    ASSERT_EQ(Slice(want), StringCmp::Decode(it.key()));
    it.Next();
  }
  EXPECT_FALSE(it.Valid());
  it.SeekToLast();
  for (auto m = model.rbegin(); m != model.rend(); ++m) {
    ASSERT_TRUE(it.Valid());
    ASSERT_EQ(Slice(*m), StringCmp::Decode(it.key()));
    it.Prev();
  }
  EXPECT_FALSE(it.Valid());
}

TEST(SkipListTest, MemoryComesFromTheArena) {
  Arena arena;
  U64List list(U64Cmp(), &arena);
  const size_t before = arena.MemoryUsage();
  for (uint64_t k = 0; k < 20000; k++) InsertU64(&list, k * 2);
  // At least the key and one link per node.
  EXPECT_GE(arena.MemoryUsage() - before, 20000u * 16);
}

// --- Concurrency: one writer, several lock-free readers ----------------------

constexpr int kReaders = 3;

// One reader pass over list for the concurrent tests, whose key i (of keys)
// carries i in the bits of index_mask: true if the pass sees a strictly
// ascending sequence of keys from keys; calls seen(index) for each.
template <class Fn>
bool ScanKnownKeysAscending(U64List::Iterator* it, const std::vector<uint64_t>& keys,
                            uint64_t index_mask, Fn&& seen) {
  bool have_prev = false;
  uint64_t prev = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const uint64_t k = U64Cmp::Decode(it->key());
    const uint64_t index = k & index_mask;
    if ((have_prev && k <= prev) || index >= keys.size() || keys[index] != k) return false;
    have_prev = true;
    prev = k;
    seen(index);
  }
  return true;
}

// The writer appends 0, 1, 2, ... in order, so the list is always exactly the
// prefix [0, n) for the n inserted so far. Each reader checks that every
// pass sees such a prefix, no shorter than what was published before the
// pass and no longer than what was published after it (plus the key being
// inserted, visible just before it is published).
TEST(SkipListTest, SkipListConcurrentAppendSeesPrefix) {
  constexpr uint64_t kKeys = 20000;
  Arena arena;
  U64List list(U64Cmp(), &arena);
  std::atomic<uint64_t> published{0};
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};

  auto reader = [&]() {
    U64List::Iterator it(&list);
    bool last_pass = false;
    while (!last_pass) {
      last_pass = done.load(std::memory_order_acquire);
      const uint64_t before = published.load(std::memory_order_acquire);
      uint64_t seen = 0;
      for (it.SeekToFirst(); it.Valid(); it.Next()) {
        if (U64Cmp::Decode(it.key()) != seen) {
          failures.fetch_add(1);
          return;
        }
        seen++;
      }
      const uint64_t after = published.load(std::memory_order_acquire);
      // The key being inserted may be seen before it is published.
      if (seen < before || seen > after + 1) {
        failures.fetch_add(1);
        return;
      }
      // From the end backwards a few steps: still the same prefix.
      it.SeekToLast();
      if (before > 0) {
        if (!it.Valid() || U64Cmp::Decode(it.key()) + 1 < before) {
          failures.fetch_add(1);
          return;
        }
        uint64_t k = U64Cmp::Decode(it.key());
        for (int step = 0; step < 50 && k > 0; step++) {
          it.Prev();
          if (!it.Valid() || U64Cmp::Decode(it.key()) != k - 1) {
            failures.fetch_add(1);
            return;
          }
          k--;
        }
      }
      // Every published key is found by a point lookup.
      if (before > 0 && !list.Contains(before - 1)) {
        failures.fetch_add(1);
        return;
      }
    }
  };

  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; i++) readers.emplace_back(reader);
  for (uint64_t k = 0; k < kKeys; k++) {
    InsertU64(&list, k);
    published.store(k + 1, std::memory_order_release);
  }
  done.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  EXPECT_EQ(0, failures.load());
}

// The writer inserts distinct keys in random order. Key i (the i-th
// inserted) carries i in its low bits. Each reader pass must see a strictly
// ascending sequence of real keys, containing every key published before the
// pass and none that was not published (or being inserted) by its end.
TEST(SkipListTest, SkipListConcurrentRandomInserts) {
  const uint64_t seed = test::TestSeed();
  constexpr uint64_t kKeys = 20000;
  constexpr int kIndexBits = 20;
  constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
  static_assert(kKeys <= kIndexMask);
  std::vector<uint64_t> keys(kKeys);
  Random rnd(seed);
  for (uint64_t i = 0; i < kKeys; i++) keys[i] = (rnd.Next64() << kIndexBits) | i;

  Arena arena;
  U64List list(U64Cmp(), &arena);
  std::atomic<uint64_t> published{0};
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};

  auto reader = [&](uint64_t reader_seed) {
    Random r(reader_seed);
    U64List::Iterator it(&list);
    bool last_pass = false;
    while (!last_pass) {
      last_pass = done.load(std::memory_order_acquire);
      const uint64_t before = published.load(std::memory_order_acquire);
      uint64_t older_seen = 0;  // keys with index < before
      std::vector<uint64_t> seen_indexes;
      if (!ScanKnownKeysAscending(&it, keys, kIndexMask, [&](uint64_t index) {
            if (index < before) older_seen++;
            seen_indexes.push_back(index);
          })) {
        failures.fetch_add(1);
        return;
      }
      const uint64_t after = published.load(std::memory_order_acquire);
      if (older_seen != before) {
        failures.fetch_add(1);
        return;
      }
      for (uint64_t index : seen_indexes) {
        if (index > after) {  // index == after: inserted, not yet published
          failures.fetch_add(1);
          return;
        }
      }
      // Point lookups and seeks of published keys.
      for (int i = 0; i < 20 && before > 0; i++) {
        const uint64_t k = keys[r.Uniform(before)];
        it.Seek(k);
        if (!list.Contains(k) || !it.Valid() || U64Cmp::Decode(it.key()) != k) {
          failures.fetch_add(1);
          return;
        }
        it.SeekForPrev(k);
        if (!it.Valid() || U64Cmp::Decode(it.key()) != k) {
          failures.fetch_add(1);
          return;
        }
      }
    }
  };

  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; i++) readers.emplace_back(reader, seed + 1 + i);
  for (uint64_t i = 0; i < kKeys; i++) {
    InsertU64(&list, keys[i]);
    published.store(i + 1, std::memory_order_release);
  }
  done.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  EXPECT_EQ(0, failures.load());
}

// Several threads link distinct keys at once (InsertConcurrently) while one
// thread keeps allocating the keys they link (AllocateKey may overlap
// concurrent inserts) and readers scan. Key i carries i in its low bits;
// inserter t links keys t, t + kInserters, ... and publishes how many it has
// linked. Each reader pass sees a strictly ascending sequence of real keys,
// with every key an inserter had published before the pass; at the end the
// list holds exactly all keys.
TEST(SkipListTest, SkipListConcurrentInsertersAndReaders) {
  const uint64_t seed = test::TestSeed();
  constexpr uint64_t kKeys = 40000;
  constexpr int kInserters = 4;
  constexpr int kIndexBits = 20;
  constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
  static_assert(kKeys <= kIndexMask);
  std::vector<uint64_t> keys(kKeys);
  Random rnd(seed);
  // Some runs of adjacent keys, so that inserters race for the same gaps.
  for (uint64_t i = 0; i < kKeys; i++) {
    keys[i] = (i % 3 == 0 ? (rnd.Next64() >> 24) << kIndexBits : 0) | i;
  }

  Arena arena;
  U64List list(U64Cmp(), &arena);
  std::vector<std::atomic<char*>> allocated(kKeys);
  for (auto& a : allocated) a.store(nullptr);
  std::atomic<uint64_t> published[kInserters];
  for (auto& p : published) p.store(0);
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};

  auto inserter = [&](int t) {
    uint64_t linked = 0;
    for (uint64_t i = static_cast<uint64_t>(t); i < kKeys; i += kInserters) {
      char* buf = nullptr;
      while ((buf = allocated[i].load(std::memory_order_acquire)) == nullptr) {
        std::this_thread::yield();
      }
      list.InsertConcurrently(buf);
      published[t].store(++linked, std::memory_order_release);
    }
  };
  auto reader = [&]() {
    U64List::Iterator it(&list);
    bool last_pass = false;
    while (!last_pass) {
      last_pass = done.load(std::memory_order_acquire);
      uint64_t before[kInserters];
      uint64_t want = 0;
      for (int t = 0; t < kInserters; t++) {
        before[t] = published[t].load(std::memory_order_acquire);
        want += before[t];
      }
      uint64_t older_seen = 0;
      if (!ScanKnownKeysAscending(&it, keys, kIndexMask,
                                  [&](uint64_t index) {
                                    if (index / kInserters < before[index % kInserters])
                                      older_seen++;
                                  }) ||
          older_seen != want) {
        failures.fetch_add(1);
        return;
      }
    }
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kInserters; t++) threads.emplace_back(inserter, t);
  for (int i = 0; i < kReaders; i++) threads.emplace_back(reader);
  for (uint64_t i = 0; i < kKeys; i++) {
    char* buf = list.AllocateKey(sizeof(uint64_t));
    EncodeFixed64(buf, keys[i]);
    allocated[i].store(buf, std::memory_order_release);
  }
  for (int t = 0; t < kInserters; t++) threads[static_cast<size_t>(t)].join();
  done.store(true, std::memory_order_release);
  for (size_t i = kInserters; i < threads.size(); i++) threads[i].join();
  EXPECT_EQ(0, failures.load());

  std::vector<uint64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  U64List::Iterator it(&list);
  size_t n = 0;
  for (it.SeekToFirst(); it.Valid(); it.Next(), n++) {
    ASSERT_LT(n, sorted.size());
    ASSERT_EQ(sorted[n], U64Cmp::Decode(it.key()));
  }
  EXPECT_EQ(sorted.size(), n);
  for (uint64_t i = 0; i < kKeys; i += 97) EXPECT_TRUE(list.Contains(keys[i]));
}

}  // namespace
}  // namespace accelkv
