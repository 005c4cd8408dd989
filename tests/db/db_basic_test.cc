// DB basics through the public API: open modes, point reads and writes,
// batches, MultiGet, snapshots, Flush/CompactRange, properties, Close,
// reopen, DestroyDB, the LOCK file and the comparator check.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "accelkv/comparator.h"
#include "accelkv/db.h"
#include "db/db_test_util.h"
#include "testutil/test_util.h"

namespace accelkv {
namespace {

using test::KeyOf;
using test::S;

class DBBasicTest : public ::testing::Test {
 protected:
  DBBasicTest() : dbname_(tmp_.File("db")) {
    options_.create_if_missing = true;
    options_.write_buffer_size = 64 << 10;
  }
  ~DBBasicTest() override { db_.reset(); }

  Status TryOpen() { return DB::Open(options_, dbname_, &db_); }
  void Open() {
    Status s = TryOpen();
    ASSERT_TRUE(s.ok()) << S(s);
  }
  void Reopen() {
    if (db_) {
      ASSERT_TRUE(db_->Close().ok());
    }
    db_.reset();
    Open();
  }
  std::string Get(const std::string& k, const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::string v;
    Status s = db_->Get(ro, k, &v);
    if (s.IsNotFound()) return "NOT_FOUND";
    if (!s.ok()) return "ERROR: " + s.ToString();
    return v;
  }
  void Put(const std::string& k, const std::string& v) {
    Status s = db_->Put(WriteOptions(), k, v);
    ASSERT_TRUE(s.ok()) << S(s);
  }
  void Del(const std::string& k) {
    Status s = db_->Delete(WriteOptions(), k);
    ASSERT_TRUE(s.ok()) << S(s);
  }
  void FlushDB() {
    Status s = db_->Flush(FlushOptions());
    ASSERT_TRUE(s.ok()) << S(s);
  }

  test::TempDir tmp_;
  const std::string dbname_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(DBBasicTest, MissingWithoutCreateIfMissingFails) {
  options_.create_if_missing = false;
  Status s = TryOpen();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsInvalidArgument() || s.IsNotFound()) << S(s);
  EXPECT_EQ(nullptr, db_.get());
}

TEST_F(DBBasicTest, CreateThenErrorIfExists) {
  Open();
  Put("a", "1");
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();
  options_.error_if_exists = true;
  Status s = TryOpen();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(nullptr, db_.get());
  // The failed open must not have damaged or kept locking the database.
  options_.error_if_exists = false;
  options_.create_if_missing = false;
  Open();
  EXPECT_EQ("1", Get("a"));
}

TEST_F(DBBasicTest, PutGetDeleteOverwrite) {
  Open();
  EXPECT_EQ("NOT_FOUND", Get("foo"));
  Put("foo", "v1");
  EXPECT_EQ("v1", Get("foo"));
  Put("foo", "v2");
  EXPECT_EQ("v2", Get("foo"));
  Del("foo");
  EXPECT_EQ("NOT_FOUND", Get("foo"));
  Del("never-existed");  // not an error
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), "foo", &v).IsNotFound());
  // The same after the data moved into a table.
  Put("bar", "b");
  FlushDB();
  EXPECT_EQ("NOT_FOUND", Get("foo"));
  EXPECT_EQ("b", Get("bar"));
}

TEST_F(DBBasicTest, EmptyKeyAndEmptyValue) {
  Open();
  Put("", "empty-key");
  Put("k", "");
  EXPECT_EQ("empty-key", Get(""));
  EXPECT_EQ("", Get("k"));
  FlushDB();
  EXPECT_EQ("empty-key", Get(""));
  EXPECT_EQ("", Get("k"));
  Reopen();
  EXPECT_EQ("empty-key", Get(""));
  EXPECT_EQ("", Get("k"));
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("", it->key().ToString());
  Del("");
  EXPECT_EQ("NOT_FOUND", Get(""));
}

TEST_F(DBBasicTest, LargeValues) {
  Open();
  Random rnd(test::TestSeed());
  const std::string big1 = test::RandomString(&rnd, 1 << 20);
  const std::string big2 = test::RandomString(&rnd, (1 << 20) + 17);
  Put("big1", big1);
  Put("small", "s");
  Put("big2", big2);
  EXPECT_EQ(big1, Get("big1"));
  FlushDB();
  EXPECT_EQ(big1, Get("big1"));
  EXPECT_EQ(big2, Get("big2"));
  Reopen();
  EXPECT_EQ(big1, Get("big1"));
  EXPECT_EQ(big2, Get("big2"));
  EXPECT_EQ("s", Get("small"));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(big2, Get("big2"));
}

// Memtables in huge-page arena blocks (a 32 MiB buffer, the smallest that
// uses them), with and without the option: writes past two memtable
// switches (about 64 MiB of values), a snapshot, WAL replay into a recovered memtable at reopen.
TEST_F(DBBasicTest, MemtableHugePagesOnAndOff) {
  for (const bool huge : {true, false}) {
    SCOPED_TRACE(huge);
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
    options_.write_buffer_size = 32 << 20;
    options_.memtable_huge_pages = huge;
    Open();
    Random rnd(test::TestSeed());
    std::map<std::string, std::string> model;
    const Snapshot* snap = nullptr;
    for (int i = 0; i < 80000; i++) {
      const std::string k = KeyOf(rnd.Uniform(60000));
      const std::string v = test::RandomString(&rnd, 600 + rnd.Uniform(400));
      Put(k, v);
      model[k] = v;
      if (i == 30000) snap = db_->GetSnapshot();
    }
    ASSERT_NE(nullptr, snap);
    int checked = 0;
    for (auto it = model.begin(); it != model.end(); ++it, ++checked) {
      if (checked % 7 == 0) {
        ASSERT_EQ(it->second, Get(it->first)) << it->first;
      }
    }
    db_->ReleaseSnapshot(snap);
    Reopen();  // the last memtable's writes come back from the WAL
    for (const auto& [k, v] : model) ASSERT_EQ(v, Get(k)) << k;
    db_.reset();
  }
}

// Either memtable index, and a reopen with the other one: the WAL's writes
// replay into whichever index the options ask for. Versions, deletions, a
// snapshot and scans both ways agree with a model.
TEST_F(DBBasicTest, MemtableIndexEitherWayAndAcrossReopen) {
  for (const bool btree : {true, false}) {
    SCOPED_TRACE(btree);
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
    options_.write_buffer_size = 1 << 20;
    options_.memtable_btree_index = btree;
    Open();
    Random rnd(test::TestSeed());
    std::map<std::string, std::string> model;
    std::map<std::string, std::string> at_snapshot;
    const Snapshot* snap = nullptr;
    for (int i = 0; i < 20000; i++) {
      const std::string k = KeyOf(rnd.Uniform(5000)) + std::string(rnd.Uniform(3), '\0');
      if (rnd.OneIn(5)) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), k).ok());
        model.erase(k);
      } else {
        const std::string v = test::RandomString(&rnd, rnd.Uniform(200));
        Put(k, v);
        model[k] = v;
      }
      if (i == 12000) {
        snap = db_->GetSnapshot();
        at_snapshot = model;
      }
    }
    ASSERT_NE(nullptr, snap);
    auto check = [&](const std::map<std::string, std::string>& want, const Snapshot* s) {
      ReadOptions ro;
      ro.snapshot = s;
      std::unique_ptr<Iterator> it = db_->NewIterator(ro);
      auto m = want.begin();
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
        ASSERT_NE(want.end(), m);
        ASSERT_EQ(m->first, it->key().ToString());
        ASSERT_EQ(m->second, it->value().ToString());
      }
      ASSERT_EQ(want.end(), m);
      auto r = want.rbegin();
      for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
        ASSERT_NE(want.rend(), r);
        ASSERT_EQ(r->first, it->key().ToString());
      }
      ASSERT_EQ(want.rend(), r);
    };
    check(model, nullptr);
    check(at_snapshot, snap);
    db_->ReleaseSnapshot(snap);
    options_.memtable_btree_index = !btree;
    Reopen();  // the last memtables' writes come back from the WAL
    check(model, nullptr);
    db_.reset();
  }
}

TEST_F(DBBasicTest, WriteBatchAppliesInOrderAndAtomically) {
  Open();
  Put("c", "old");
  WriteBatch batch;
  batch.Put("a", "1");
  batch.Delete("a");
  batch.Put("b", "2");
  batch.Put("b", "3");
  batch.Delete("c");
  batch.Put("d", "4");
  EXPECT_EQ(6u, batch.Count());
  ASSERT_TRUE(db_->Write(WriteOptions(), batch).ok());
  EXPECT_EQ("NOT_FOUND", Get("a"));
  EXPECT_EQ("3", Get("b"));
  EXPECT_EQ("NOT_FOUND", Get("c"));
  EXPECT_EQ("4", Get("d"));
  // An empty batch is fine.
  ASSERT_TRUE(db_->Write(WriteOptions(), WriteBatch()).ok());
  Reopen();  // the batch is replayed from the WAL the same way
  EXPECT_EQ("NOT_FOUND", Get("a"));
  EXPECT_EQ("3", Get("b"));
  EXPECT_EQ("NOT_FOUND", Get("c"));
  EXPECT_EQ("4", Get("d"));
}

TEST_F(DBBasicTest, MultiGetAcrossMemtableAndTables) {
  Open();
  for (int i = 0; i < 100; i++) Put(KeyOf(i), "t" + std::to_string(i));
  FlushDB();
  for (int i = 50; i < 150; i++) Put(KeyOf(i), "m" + std::to_string(i));
  for (int i = 0; i < 150; i += 10) Del(KeyOf(i));
  std::vector<std::string> key_strings;
  for (int i = 0; i < 160; i += 3) key_strings.push_back(KeyOf(i));
  key_strings.push_back(KeyOf(7));  // duplicates are allowed
  std::vector<Slice> keys(key_strings.begin(), key_strings.end());
  std::vector<std::string> values;
  std::vector<Status> st = db_->MultiGet(ReadOptions(), keys, &values);
  ASSERT_EQ(keys.size(), st.size());
  ASSERT_EQ(keys.size(), values.size());
  for (size_t j = 0; j < keys.size(); j++) {
    EXPECT_EQ(Get(key_strings[j]), st[j].ok()           ? values[j]
                                   : st[j].IsNotFound() ? "NOT_FOUND"
                                                        : "?")
        << key_strings[j] << " " << S(st[j]);
  }
  std::vector<std::string> none;
  EXPECT_TRUE(db_->MultiGet(ReadOptions(), {}, &none).empty());
}

class DBIteratorBasicTest : public DBBasicTest {
 protected:
  // Even keys 0..98 present, split over a table and the memtable, plus some
  // deleted and overwritten ones.
  void Fill() {
    Open();
    for (int i = 0; i < 100; i += 2) Put(KeyOf(i, 2), "v" + std::to_string(i));
    Put(KeyOf(1, 2), "deleted-later");
    FlushDB();
    for (int i = 0; i < 100; i += 4) Put(KeyOf(i, 2), "w" + std::to_string(i));
    Del(KeyOf(1, 2));
    Put(KeyOf(3, 2), "x");
    Del(KeyOf(3, 2));
  }
  static std::string Expected(int i) { return (i % 4 == 0 ? "w" : "v") + std::to_string(i); }
};

TEST_F(DBIteratorBasicTest, ForwardBackwardSeek) {
  Fill();
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  it->SeekToFirst();
  for (int i = 0; i < 100; i += 2) {
    ASSERT_TRUE(it->Valid()) << i;
    EXPECT_EQ(KeyOf(i, 2), it->key().ToString());
    EXPECT_EQ(Expected(i), it->value().ToString());
    it->Next();
  }
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  for (int i = 98; i >= 0; i -= 2) {
    ASSERT_TRUE(it->Valid()) << i;
    EXPECT_EQ(KeyOf(i, 2), it->key().ToString());
    EXPECT_EQ(Expected(i), it->value().ToString());
    it->Prev();
  }
  EXPECT_FALSE(it->Valid());

  it->Seek(KeyOf(31, 2));  // between keys
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(KeyOf(32, 2), it->key().ToString());
  it->Seek(KeyOf(32, 2));  // exact
  EXPECT_EQ(KeyOf(32, 2), it->key().ToString());
  it->Seek(KeyOf(1, 2));  // a deleted key is skipped
  EXPECT_EQ(KeyOf(2, 2), it->key().ToString());
  it->Seek("z");
  EXPECT_FALSE(it->Valid());
  it->Seek("");
  EXPECT_EQ(KeyOf(0, 2), it->key().ToString());

  it->SeekForPrev(KeyOf(31, 2));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(KeyOf(30, 2), it->key().ToString());
  it->SeekForPrev(KeyOf(30, 2));
  EXPECT_EQ(KeyOf(30, 2), it->key().ToString());
  it->SeekForPrev(KeyOf(3, 2));  // deleted key: the one before
  EXPECT_EQ(KeyOf(2, 2), it->key().ToString());
  it->SeekForPrev("a");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("z");
  EXPECT_EQ(KeyOf(98, 2), it->key().ToString());
  EXPECT_TRUE(it->status().ok());
}

TEST_F(DBIteratorBasicTest, DirectionChanges) {
  Fill();
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  it->Seek(KeyOf(50, 2));
  it->Next();
  EXPECT_EQ(KeyOf(52, 2), it->key().ToString());
  it->Prev();
  EXPECT_EQ(KeyOf(50, 2), it->key().ToString());
  it->Prev();
  EXPECT_EQ(KeyOf(48, 2), it->key().ToString());
  it->Next();
  EXPECT_EQ(KeyOf(50, 2), it->key().ToString());
  EXPECT_EQ(Expected(50), it->value().ToString());
  it->SeekForPrev(KeyOf(5, 2));  // 4, landed on backwards over deleted 3
  EXPECT_EQ(KeyOf(4, 2), it->key().ToString());
  it->Next();
  EXPECT_EQ(KeyOf(6, 2), it->key().ToString());
  it->Prev();
  it->Prev();
  EXPECT_EQ(KeyOf(2, 2), it->key().ToString());  // skipped deleted 3 going back
  it->Prev();
  EXPECT_EQ(KeyOf(0, 2), it->key().ToString());
  it->Prev();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  it->Prev();
  it->Next();
  EXPECT_EQ(KeyOf(98, 2), it->key().ToString());
}

TEST_F(DBIteratorBasicTest, Bounds) {
  Fill();
  // The bounds must outlive the iterator: keep the strings, not temporaries.
  const std::string lower_key = KeyOf(10, 2);
  const std::string upper_key = KeyOf(20, 2);
  const Slice lower = lower_key;
  const Slice upper = upper_key;
  ReadOptions ro;
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  std::vector<std::string> seen;
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen.push_back(it->key().ToString());
  EXPECT_EQ((std::vector<std::string>{"k10", "k12", "k14", "k16", "k18"}), seen);
  seen.clear();
  for (it->SeekToLast(); it->Valid(); it->Prev()) seen.push_back(it->key().ToString());
  EXPECT_EQ((std::vector<std::string>{"k18", "k16", "k14", "k12", "k10"}), seen);
  it->Seek(KeyOf(0, 2));  // below the lower bound: clamped to it
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("k10", it->key().ToString());
  it->Seek(KeyOf(20, 2));  // the upper bound is exclusive
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(KeyOf(99, 2));  // above the upper bound: clamped below it
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("k18", it->key().ToString());
  it->SeekForPrev(KeyOf(9, 2));  // below the lower bound
  EXPECT_FALSE(it->Valid());
  it->Seek(KeyOf(18, 2));
  it->Next();
  EXPECT_FALSE(it->Valid());

  // Only an upper bound; only a lower bound.
  ReadOptions upper_only;
  upper_only.iterate_upper_bound = &upper;
  it = db_->NewIterator(upper_only);
  it->SeekToLast();
  EXPECT_EQ("k18", it->key().ToString());
  ReadOptions lower_only;
  lower_only.iterate_lower_bound = &lower;
  it = db_->NewIterator(lower_only);
  it->SeekToFirst();
  EXPECT_EQ("k10", it->key().ToString());
  it->Prev();
  EXPECT_FALSE(it->Valid());
  // An empty range.
  ReadOptions empty;
  empty.iterate_lower_bound = &upper;
  empty.iterate_upper_bound = &upper;
  it = db_->NewIterator(empty);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
}

TEST_F(DBIteratorBasicTest, IteratorIsASnapshotAndSurvivesFlushAndCompaction) {
  Fill();
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  for (int i = 0; i < 100; i++) Put(KeyOf(i, 2), "later");
  Del(KeyOf(0, 2));
  FlushDB();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
    EXPECT_EQ(KeyOf(2 * n, 2), it->key().ToString());
    EXPECT_EQ(Expected(2 * n), it->value().ToString());
  }
  EXPECT_EQ(50, n);
  EXPECT_TRUE(it->status().ok()) << S(it->status());
}

TEST_F(DBBasicTest, SnapshotsIgnoreLaterWritesAcrossFlushAndCompaction) {
  Open();
  Put("a", "a1");
  Put("b", "b1");
  const Snapshot* s1 = db_->GetSnapshot();
  Put("a", "a2");
  Del("b");
  Put("c", "c2");
  const Snapshot* s2 = db_->GetSnapshot();
  Put("a", "a3");
  EXPECT_EQ("a1", Get("a", s1));
  EXPECT_EQ("b1", Get("b", s1));
  EXPECT_EQ("NOT_FOUND", Get("c", s1));
  EXPECT_EQ("a2", Get("a", s2));
  EXPECT_EQ("NOT_FOUND", Get("b", s2));
  EXPECT_EQ("a3", Get("a"));

  auto check = [&] {
    EXPECT_EQ("a1", Get("a", s1));
    EXPECT_EQ("b1", Get("b", s1));
    EXPECT_EQ("NOT_FOUND", Get("c", s1));
    EXPECT_EQ("a2", Get("a", s2));
    EXPECT_EQ("NOT_FOUND", Get("b", s2));
    EXPECT_EQ("c2", Get("c", s2));
    EXPECT_EQ("a3", Get("a"));
    ReadOptions ro;
    ro.snapshot = s1;
    std::map<std::string, std::string> all;
    ASSERT_TRUE(test::ReadAll(db_.get(), ro, &all).ok());
    EXPECT_EQ((std::map<std::string, std::string>{{"a", "a1"}, {"b", "b1"}}), all);
    ro.snapshot = s2;
    ASSERT_TRUE(test::ReadAllBackward(db_.get(), ro, &all).ok());
    EXPECT_EQ((std::map<std::string, std::string>{{"a", "a2"}, {"c", "c2"}}), all);
    std::vector<std::string> values;
    std::vector<Status> st = db_->MultiGet(ro, {Slice("a"), Slice("b")}, &values);
    EXPECT_TRUE(st[0].ok());
    EXPECT_EQ("a2", values[0]);
    EXPECT_TRUE(st[1].IsNotFound());
  };
  check();
  FlushDB();
  check();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  check();
  // Enough writes to push the old versions through more compactions.
  for (int i = 0; i < 3000; i++) Put(KeyOf(i), std::string(100, 'x'));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  check();
  db_->ReleaseSnapshot(s1);
  db_->ReleaseSnapshot(s2);
  db_->ReleaseSnapshot(nullptr);  // allowed, does nothing
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ("a3", Get("a"));
  EXPECT_EQ("NOT_FOUND", Get("b"));
}

TEST_F(DBBasicTest, FlushWritesLevel0TableAndCompactRangeMovesItDown) {
  Open();
  EXPECT_EQ(0, test::NumFilesAtLevel(db_.get(), 0));
  for (int i = 0; i < 100; i++) Put(KeyOf(i), "v" + std::to_string(i));
  FlushDB();
  EXPECT_EQ(1, test::NumFilesAtLevel(db_.get(), 0));
  FlushDB();  // nothing new: no new file
  EXPECT_EQ(1, test::NumFilesAtLevel(db_.get(), 0));
  for (int i = 0; i < 100; i += 2) Del(KeyOf(i));
  FlushDB();
  EXPECT_EQ(2, test::NumFilesAtLevel(db_.get(), 0));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(0, test::NumFilesAtLevel(db_.get(), 0));
  EXPECT_GE(test::NumFilesBelowLevel0(db_.get(), options_.num_levels), 1);
  for (int i = 0; i < 100; i++) {
    EXPECT_EQ(i % 2 == 0 ? "NOT_FOUND" : "v" + std::to_string(i), Get(KeyOf(i)));
  }
}

TEST_F(DBBasicTest, FlushDropsVersionsNoSnapshotSeesAndKeepsTombstones) {
  Open();
  Put("b", "old");
  FlushDB();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());  // b=old below level 0
  Put("a", "1");
  Put("a", "2");
  const Snapshot* snap = db_->GetSnapshot();
  Put("a", "3");
  Put("b", "x");
  Del("b");  // hides b=x in the same stripe: b=x is dropped, the tombstone kept
  Put("c", "1");
  Put("c", "2");
  Put("c", "3");
  FlushDB();
  std::string json;
  ASSERT_TRUE(db_->GetProperty("accelkv.stats.json", &json));
  // a=1 (hidden by a=2 below the snapshot), b=x, c=1, c=2.
  EXPECT_NE(std::string::npos, json.find("\"flush_dropped_entries\":4")) << json;
  EXPECT_EQ("3", Get("a"));
  EXPECT_EQ("2", Get("a", snap));
  EXPECT_EQ("NOT_FOUND", Get("b"));  // the kept tombstone hides b=old
  EXPECT_EQ("old", Get("b", snap));
  EXPECT_EQ("3", Get("c"));
  EXPECT_EQ("NOT_FOUND", Get("c", snap));
  db_->ReleaseSnapshot(snap);
  Reopen();
  EXPECT_EQ("3", Get("a"));
  EXPECT_EQ("NOT_FOUND", Get("b"));
  EXPECT_EQ("3", Get("c"));
}

TEST_F(DBBasicTest, PartialCompactRange) {
  Open();
  for (int i = 0; i < 100; i++) Put(KeyOf(i), "a" + std::to_string(i));
  FlushDB();
  for (int i = 500; i < 600; i++) Put(KeyOf(i), "b" + std::to_string(i));
  FlushDB();
  ASSERT_EQ(2, test::NumFilesAtLevel(db_.get(), 0));
  const std::string begin_key = KeyOf(10), end_key = KeyOf(20);
  const Slice begin = begin_key;
  const Slice end = end_key;
  ASSERT_TRUE(db_->CompactRange(&begin, &end).ok());
  // Only the file overlapping [begin, end] left level 0.
  EXPECT_EQ(1, test::NumFilesAtLevel(db_.get(), 0));
  EXPECT_GE(test::NumFilesBelowLevel0(db_.get(), options_.num_levels), 1);
  const std::string b2_key = KeyOf(550);
  const Slice b2 = b2_key;
  ASSERT_TRUE(db_->CompactRange(&b2, nullptr).ok());
  EXPECT_EQ(0, test::NumFilesAtLevel(db_.get(), 0));
  std::map<std::string, std::string> all;
  ASSERT_TRUE(test::ReadAll(db_.get(), ReadOptions(), &all).ok());
  EXPECT_EQ(200u, all.size());
  EXPECT_EQ("a5", all[KeyOf(5)]);
  EXPECT_EQ("b599", all[KeyOf(599)]);
  // A range with no data is fine.
  const Slice nb = "zz0";
  const Slice ne = "zz9";
  EXPECT_TRUE(db_->CompactRange(&nb, &ne).ok());
}

TEST_F(DBBasicTest, Properties) {
  Open();
  for (int i = 0; i < 100; i++) Put(KeyOf(i), "v");
  FlushDB();
  std::string value;
  ASSERT_TRUE(db_->GetProperty("accelkv.stats", &value));
  EXPECT_FALSE(value.empty());
  ASSERT_TRUE(db_->GetProperty("accelkv.num-files-at-level0", &value));
  EXPECT_EQ("1", value);
  ASSERT_TRUE(db_->GetProperty("accelkv.num-files-at-level1", &value));
  EXPECT_EQ("0", value);
  EXPECT_TRUE(db_->GetProperty("accelkv.sstables", &value));
  EXPECT_TRUE(db_->GetProperty("accelkv.approximate-memory-usage", &value));
  EXPECT_TRUE(db_->GetProperty("accelkv.write-amplification", &value));
  EXPECT_TRUE(db_->GetProperty("accelkv.stats.json", &value));
  EXPECT_EQ('{', value.empty() ? ' ' : value[0]);
  // Whole: the executors' object and the closing braces (a fixed-size format
  // buffer once cut the JSON short after a long GPU status line).
  EXPECT_NE(std::string::npos, value.find("\"executors\":{")) << value;
  EXPECT_TRUE(value.ends_with("}}")) << value;
  EXPECT_FALSE(db_->GetProperty("accelkv.no-such-property", &value));
  EXPECT_FALSE(db_->GetProperty("rocksdb.stats", &value));
  EXPECT_FALSE(db_->GetProperty("", &value));
  EXPECT_FALSE(db_->GetProperty("accelkv.num-files-at-level", &value));
  EXPECT_FALSE(db_->GetProperty("accelkv.num-files-at-level99", &value));
  EXPECT_FALSE(db_->GetProperty("accelkv.num-files-at-level-1", &value));
}

TEST_F(DBBasicTest, CallsAfterCloseFailCleanly) {
  Open();
  Put("a", "1");
  ASSERT_TRUE(db_->Close().ok());
  std::string v;
  EXPECT_FALSE(db_->Put(WriteOptions(), "b", "2").ok());
  EXPECT_FALSE(db_->Delete(WriteOptions(), "a").ok());
  WriteBatch batch;
  batch.Put("c", "3");
  EXPECT_FALSE(db_->Write(WriteOptions(), batch).ok());
  EXPECT_FALSE(db_->Get(ReadOptions(), "a", &v).ok());
  std::vector<std::string> values;
  std::vector<Status> st = db_->MultiGet(ReadOptions(), {Slice("a")}, &values);
  ASSERT_EQ(1u, st.size());
  EXPECT_FALSE(st[0].ok());
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_FALSE(it->status().ok());
  EXPECT_FALSE(db_->Flush(FlushOptions()).ok());
  EXPECT_FALSE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_FALSE(db_->GetProperty("accelkv.stats", &v));
  EXPECT_TRUE(db_->Close().ok());  // a second Close is harmless
  db_.reset();
  options_.create_if_missing = false;
  Open();  // the lock was released
  EXPECT_EQ("1", Get("a"));
}

TEST_F(DBBasicTest, ReopenKeepsFlushedAndUnflushedData) {
  Open();
  for (int i = 0; i < 1000; i++) Put(KeyOf(i), "first" + std::to_string(i));
  FlushDB();
  for (int i = 0; i < 1000; i += 3) Put(KeyOf(i), "second" + std::to_string(i));
  for (int i = 1; i < 1000; i += 3) Del(KeyOf(i));
  Reopen();
  auto check = [&] {
    for (int i = 0; i < 1000; i++) {
      const std::string want = i % 3 == 0   ? "second" + std::to_string(i)
                               : i % 3 == 1 ? "NOT_FOUND"
                                            : "first" + std::to_string(i);
      ASSERT_EQ(want, Get(KeyOf(i))) << i;
    }
  };
  check();
  Reopen();  // recovery of a recovered database
  check();
  Put("new", "n");  // writes after recovery get fresh sequence numbers
  Reopen();
  check();
  EXPECT_EQ("n", Get("new"));
  // Dropping the handle without Close also closes it.
  Put("unclosed", "u");
  db_.reset();
  Open();
  EXPECT_EQ("u", Get("unclosed"));
}

TEST_F(DBBasicTest, DestroyDBRemovesEverything) {
  Open();
  for (int i = 0; i < 100; i++) Put(KeyOf(i), "v");
  FlushDB();
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();
  Status s = DestroyDB(dbname_, options_);
  ASSERT_TRUE(s.ok()) << S(s);
  EXPECT_FALSE(Env::Default()->FileExists(dbname_ + "/CURRENT"));
  options_.create_if_missing = false;
  EXPECT_FALSE(TryOpen().ok());
  options_.create_if_missing = true;
  Open();
  EXPECT_EQ("NOT_FOUND", Get(KeyOf(1)));
  // Destroying a database that does not exist is not an error.
  EXPECT_TRUE(DestroyDB(tmp_.File("nothing-here"), options_).ok());
}

TEST_F(DBBasicTest, LockPreventsSecondOpen) {
  Open();
  std::unique_ptr<DB> second;
  Status s = DB::Open(options_, dbname_, &second);
  EXPECT_TRUE(s.IsBusy() || s.IsIOError()) << S(s);
  EXPECT_EQ(nullptr, second.get());
  // The failed open left the first handle working.
  Put("a", "1");
  EXPECT_EQ("1", Get("a"));
  // DestroyDB of an open database must not delete its files.
  EXPECT_FALSE(DestroyDB(dbname_, options_).ok());
  EXPECT_EQ("1", Get("a"));
  Reopen();
  EXPECT_EQ("1", Get("a"));
}

class ReverseComparator : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override {
    return BytewiseComparator()->Compare(b, a);
  }
  const char* Name() const override { return "test.ReverseBytewise"; }
};

TEST_F(DBBasicTest, CustomComparatorOrderAndNameCheck) {
  static ReverseComparator reverse;
  options_.comparator = &reverse;
  Open();
  for (int i = 0; i < 50; i++) Put(KeyOf(i, 2), "v" + std::to_string(i));
  FlushDB();
  for (int i = 50; i < 100; i++) Put(KeyOf(i, 2), "v" + std::to_string(i));
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  int i = 99;
  for (it->SeekToFirst(); it->Valid(); it->Next(), i--) {
    ASSERT_EQ(KeyOf(i, 2), it->key().ToString());
  }
  EXPECT_EQ(-1, i);
  it->Seek(KeyOf(42, 2));
  EXPECT_EQ(KeyOf(42, 2), it->key().ToString());
  it->Next();
  EXPECT_EQ(KeyOf(41, 2), it->key().ToString());
  it.reset();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ("v7", Get(KeyOf(7, 2)));
  Reopen();
  EXPECT_EQ("v77", Get(KeyOf(77, 2)));
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();

  options_.comparator = BytewiseComparator();
  Status s = TryOpen();
  EXPECT_TRUE(s.IsInvalidArgument()) << S(s);
  EXPECT_EQ(nullptr, db_.get());
  options_.comparator = &reverse;
  Open();  // still fine with the right one
  EXPECT_EQ("v7", Get(KeyOf(7, 2)));
}

}  // namespace
}  // namespace accelkv
