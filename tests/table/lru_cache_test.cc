#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "accelkv/cache.h"
#include "table/table_test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace accelkv {
namespace {

// Values are ints; the deleter records which keys were freed.
std::vector<int>* deleted_keys = nullptr;
std::atomic<int> live_values{0};

void Deleter(const Slice& key, void* value) {
  if (deleted_keys != nullptr) deleted_keys->push_back(DecodeFixed32(key.data()));
  delete static_cast<int*>(value);
  live_values.fetch_sub(1);
}

std::string K(int k) {
  std::string s;
  PutFixed32(&s, static_cast<uint32_t>(k));
  return s;
}

class LRUCacheTest : public testing::Test {
 protected:
  LRUCacheTest() : cache_(NewLRUCache(kCapacity, 0)) { deleted_keys = &deleted_; }
  ~LRUCacheTest() override {
    cache_.reset();
    deleted_keys = nullptr;
    EXPECT_EQ(0, live_values.load());
  }

  static constexpr size_t kCapacity = 100;

  void Insert(int key, int value, size_t charge = 1) {
    live_values.fetch_add(1);
    cache_->Release(cache_->Insert(K(key), new int(value), charge, &Deleter));
  }
  int Lookup(int key) {
    Cache::Handle* h = cache_->Lookup(K(key));
    if (h == nullptr) return -1;
    const int v = *static_cast<int*>(cache_->Value(h));
    cache_->Release(h);
    return v;
  }

  std::vector<int> deleted_;
  std::shared_ptr<Cache> cache_;
};

TEST_F(LRUCacheTest, HitAndMissAndReplace) {
  EXPECT_EQ(-1, Lookup(100));
  Insert(100, 101);
  EXPECT_EQ(101, Lookup(100));
  EXPECT_EQ(-1, Lookup(200));
  Insert(100, 102);  // replaces
  EXPECT_EQ(102, Lookup(100));
  ASSERT_EQ(1u, deleted_.size());
  EXPECT_EQ(100, deleted_[0]);
  EXPECT_EQ(1u, cache_->TotalCharge());
  cache_->Erase(K(100));
  EXPECT_EQ(-1, Lookup(100));
  EXPECT_EQ(2u, deleted_.size());
  EXPECT_EQ(0u, cache_->TotalCharge());
  cache_->Erase(K(100));  // erasing a missing key is harmless
  EXPECT_EQ(2u, deleted_.size());
}

TEST_F(LRUCacheTest, EvictsLeastRecentlyUsedByCharge) {
  Insert(1, 1, 40);
  Insert(2, 2, 40);
  EXPECT_EQ(1, Lookup(1));  // 2 is now the oldest
  Insert(3, 3, 40);         // 120 > 100: evicts 2
  EXPECT_EQ(-1, Lookup(2));
  EXPECT_EQ(1, Lookup(1));
  EXPECT_EQ(3, Lookup(3));
  EXPECT_EQ(80u, cache_->TotalCharge());
  EXPECT_EQ(kCapacity, cache_->Capacity());
  for (int i = 10; i < 1000; ++i) {
    Insert(i, i, 1 + i % 7);
    ASSERT_LE(cache_->TotalCharge(), kCapacity);
  }
}

TEST_F(LRUCacheTest, PinnedEntriesAreNeverFreed) {
  live_values.fetch_add(1);
  Cache::Handle* pinned = cache_->Insert(K(1), new int(7), 60, &Deleter);
  for (int i = 2; i < 200; ++i) Insert(i, i, 30);
  EXPECT_EQ(7, *static_cast<int*>(cache_->Value(pinned)));
  EXPECT_EQ(std::find(deleted_.begin(), deleted_.end(), 1), deleted_.end());
  cache_->Erase(K(1));  // gone from the cache, still valid for the holder
  EXPECT_EQ(-1, Lookup(1));
  EXPECT_EQ(7, *static_cast<int*>(cache_->Value(pinned)));
  EXPECT_EQ(std::find(deleted_.begin(), deleted_.end(), 1), deleted_.end());
  cache_->Release(pinned);
  EXPECT_NE(std::find(deleted_.begin(), deleted_.end(), 1), deleted_.end());
}

TEST_F(LRUCacheTest, OverCapacityWhilePinnedShrinksOnRelease) {
  live_values.fetch_add(2);
  Cache::Handle* a = cache_->Insert(K(1), new int(1), 80, &Deleter);
  Cache::Handle* b = cache_->Insert(K(2), new int(2), 80, &Deleter);
  EXPECT_EQ(160u, cache_->TotalCharge());  // both pinned: over capacity is allowed
  cache_->Release(a);                      // unpinned and over capacity: evicted
  EXPECT_EQ(80u, cache_->TotalCharge());
  EXPECT_EQ(-1, Lookup(1));
  cache_->Release(b);
  EXPECT_EQ(2, Lookup(2));
}

TEST(LRUCacheStandaloneTest, ZeroCapacityCachesNothing) {
  std::shared_ptr<Cache> cache = NewLRUCache(0, 0);
  live_values.fetch_add(1);
  Cache::Handle* h = cache->Insert(K(1), new int(5), 1, &Deleter);
  EXPECT_EQ(5, *static_cast<int*>(cache->Value(h)));
  EXPECT_EQ(nullptr, cache->Lookup(K(1)));
  cache->Release(h);
  EXPECT_EQ(0, live_values.load());
}

TEST(LRUCacheStandaloneTest, NewIdIsUnique) {
  std::shared_ptr<Cache> cache = NewLRUCache(1000);
  const uint64_t a = cache->NewId();
  const uint64_t b = cache->NewId();
  EXPECT_NE(a, b);
}

TEST(LRUCacheStandaloneTest, ConcurrentUseKeepsInvariants) {
  const uint64_t seed = test::TestSeed();
  constexpr size_t kCap = 2000;
  {
    std::shared_ptr<Cache> cache = NewLRUCache(kCap, 3);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&cache, seed, t] {
        Random rnd(seed + t);
        std::vector<Cache::Handle*> held;
        for (int i = 0; i < 20000; ++i) {
          const int key = static_cast<int>(rnd.Uniform(500));
          if (rnd.OneIn(3)) {
            live_values.fetch_add(1);
            held.push_back(cache->Insert(K(key), new int(key), 1 + rnd.Uniform(20), &Deleter));
          } else if (Cache::Handle* h = cache->Lookup(K(key))) {
            EXPECT_EQ(key, *static_cast<int*>(cache->Value(h)));
            held.push_back(h);
          }
          if (rnd.OneIn(50)) cache->Erase(K(key));
          while (held.size() > 8 || (!held.empty() && rnd.OneIn(2))) {
            cache->Release(held.back());
            held.pop_back();
          }
        }
        for (Cache::Handle* h : held) cache->Release(h);
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_LE(cache->TotalCharge(), kCap);
  }
  EXPECT_EQ(0, live_values.load());
}

}  // namespace
}  // namespace accelkv
