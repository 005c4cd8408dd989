#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "table/table_builder.h"
#include "table/table_cache.h"
#include "table/table_test_util.h"
#include "util/filename.h"

namespace accelkv {
namespace {

using test::IKey;

class TableCacheTest : public testing::Test {
 protected:
  static constexpr int kTables = 20;
  static constexpr int kEntries = 5;

  TableCacheTest() : icmp_(BytewiseComparator()) {
    options_.comparator = &icmp_;
    options_.user_comparator = BytewiseComparator();
    for (int t = 1; t <= kTables; ++t) {
      test::StringSink sink;
      TableBuilder b(options_, &sink);
      b.Add(Key(t), "value" + std::to_string(t));
      EXPECT_TRUE(b.Finish().ok());
      sizes_.push_back(sink.contents().size());
      EXPECT_TRUE(WriteStringToFile(&env_, sink.contents(), TableFileName("db", t), true).ok());
    }
  }

  static std::string Key(int t) { return IKey("key" + std::to_string(t), 5); }
  uint64_t Size(int t) const { return sizes_[t - 1]; }

  std::string Get(TableCache* tc, int t) {
    std::string result;
    Status s = tc->Get(ReadOptions(), t, Size(t), Key(t),
                       [&](const Slice& k, const Slice& v) { result = v.ToString(); });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return result;
  }

  test::MemTestEnv env_;
  InternalKeyComparator icmp_;
  TableOptions options_;
  std::vector<uint64_t> sizes_;
};

TEST_F(TableCacheTest, EvictsBeyondMaxEntries) {
  TableCache tc("db", &env_, options_, kEntries);
  for (int round = 0; round < 2; ++round) {
    for (int t = 1; t <= kTables; ++t) {
      ASSERT_EQ("value" + std::to_string(t), Get(&tc, t));
      ASSERT_LE(env_.live_random_access_files(), kEntries);
    }
  }
  EXPECT_EQ(kEntries, env_.live_random_access_files());
  EXPECT_EQ(2 * kTables, env_.random_access_opens());  // LRU: every access missed
  // Recently used tables are hits.
  const int opens = env_.random_access_opens();
  for (int t = kTables - kEntries + 1; t <= kTables; ++t) Get(&tc, t);
  EXPECT_EQ(opens, env_.random_access_opens());
}

TEST_F(TableCacheTest, EvictAndPinning) {
  TableCache tc("db", &env_, options_, kEntries);
  const Table* table = nullptr;
  std::unique_ptr<Iterator> it(tc.NewIterator(ReadOptions(), 3, Size(3), &table));
  ASSERT_NE(nullptr, table);
  EXPECT_EQ(1u, table->properties().num_entries);
  tc.Evict(3);
  // Filling the cache does not close the pinned table.
  for (int t = 4; t <= 4 + kEntries; ++t) Get(&tc, t);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(Key(3), it->key().ToString());
  EXPECT_EQ(kEntries + 1, env_.live_random_access_files());
  it.reset();
  EXPECT_EQ(kEntries, env_.live_random_access_files());

  uint64_t entries = 0;
  ASSERT_TRUE(
      tc.WithTable(7, Size(7), [&](const Table& t) { entries = t.properties().num_entries; }).ok());
  EXPECT_EQ(1u, entries);
}

TEST_F(TableCacheTest, ErrorsAreReturnedAndNotCached) {
  TableCache tc("db", &env_, options_, kEntries);
  std::unique_ptr<Iterator> it(tc.NewIterator(ReadOptions(), 99, 100));
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsNotFound());
  // Wrong size: the footer is not where the cache looks.
  Status s = tc.Get(ReadOptions(), 1, Size(1) - 1, Key(1), [](const Slice&, const Slice&) {});
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ("value1", Get(&tc, 1));  // the failure was not cached
}

// Tables opened mmap'd through the POSIX Env: an iterator keeps its table
// (and so the mapping its blocks point into) alive after the table leaves the
// cache. Under ASan a read of an unmapped block would fault here.
TEST_F(TableCacheTest, MmapTablesStayMappedWhileIteratorsLive) {
  test::TempDir dir;
  const std::string dbname = dir.path();
  for (int t = 1; t <= kTables; ++t) {
    std::unique_ptr<RandomAccessFile> file;
    ASSERT_TRUE(env_.NewRandomAccessFile(TableFileName("db", t), &file).ok());
    std::string scratch(Size(t), '\0');
    Slice bytes;
    ASSERT_TRUE(file->Read(0, Size(t), &bytes, scratch.data()).ok());
    ASSERT_TRUE(WriteStringToFile(Env::Default(), bytes, TableFileName(dbname, t), false).ok());
  }
  options_.use_mmap_reads = true;
  std::shared_ptr<Cache> block_cache = NewLRUCache(1 << 20);
  options_.block_cache = block_cache.get();
  TableCache tc(dbname, Env::Default(), options_, kEntries);
  std::vector<std::unique_ptr<Iterator>> iters;
  for (int t = 1; t <= kTables; ++t) {
    iters.emplace_back(tc.NewIterator(ReadOptions(), t, Size(t)));
    iters.back()->SeekToFirst();  // reads the data block: it points into the mapping
    ASSERT_TRUE(iters.back()->Valid());
    tc.Evict(t);
  }
  for (int t = 1; t <= kTables; ++t) ASSERT_EQ("value" + std::to_string(t), Get(&tc, t));
  for (int t = 1; t <= kTables; ++t) {
    ASSERT_TRUE(Env::Default()->RemoveFile(TableFileName(dbname, t)).ok());
  }
  for (int t = 1; t <= kTables; ++t) {  // evicted, pushed out, unlinked: still readable
    Iterator* it = iters[t - 1].get();
    EXPECT_EQ(Key(t), it->key().ToString());
    EXPECT_EQ("value" + std::to_string(t), it->value().ToString());
  }
  iters.clear();
  EXPECT_EQ(0u, block_cache->TotalCharge());  // mapped blocks bypass the block cache
}

}  // namespace
}  // namespace accelkv
