#include "memtable/memtable.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "memtable/link_job.h"
#include "memtable/write_batch_internal.h"
#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

// Reverse bytewise order: exercises the non-bytewise (virtual) path.
class ReverseComparator final : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return -a.compare(b); }
  const char* Name() const override { return "test.Reverse"; }
};

const Comparator* Reverse() {
  static const ReverseComparator* c = new ReverseComparator;
  return c;
}

// Owns one reference to a fresh memtable.
struct MemTableRef {
  explicit MemTableRef(const InternalKeyComparator& icmp, bool huge_arena = false,
                       bool btree = true)
      : mem(new MemTable(icmp, huge_arena, btree)) {
    mem->Ref();
  }
  ~MemTableRef() { mem->Unref(); }
  MemTable* operator->() const { return mem; }
  MemTable* mem;
};

// Parameters: a bytewise (or reverse) comparator; an arena of huge blocks
// (or of 4 KiB ones); a B+-tree index (or the skiplist; the reverse
// comparator always gets the skiplist).
class MemTableTest : public testing::TestWithParam<std::tuple<bool, bool, bool>> {
 protected:
  MemTableTest()
      : icmp_(std::get<0>(GetParam()) ? BytewiseComparator() : Reverse()),
        mem_(icmp_, HugeArena(), BTree()) {}

  static bool HugeArena() { return std::get<1>(GetParam()); }
  static bool BTree() { return std::get<2>(GetParam()); }

  // "v:<value>", "del" or "none" (the memtable does not decide the key).
  std::string Get(const std::string& key, SequenceNumber seq) {
    std::string value = "untouched";
    Status s = Status::Corruption("untouched");
    if (!mem_->Get(LookupKey(key, seq), &value, &s)) {
      EXPECT_EQ("untouched", value);
      EXPECT_TRUE(s.IsCorruption());
      return "none";
    }
    if (s.IsNotFound()) return "del";
    EXPECT_TRUE(s.ok()) << s.ToString();
    return "v:" + value;
  }

  InternalKeyComparator icmp_;
  MemTableRef mem_;
};

TEST_P(MemTableTest, IndexIsTheOneAskedFor) {
  EXPECT_EQ(std::get<0>(GetParam()) && BTree(), mem_->UsesBTree());
}

TEST_P(MemTableTest, VersionsSnapshotsAndTombstones) {
  mem_->Add(1, ValueType::kValue, "k", "v1");
  mem_->Add(3, ValueType::kValue, "k", "v3");
  mem_->Add(5, ValueType::kDeletion, "k", "");
  mem_->Add(7, ValueType::kValue, "k", "v7");
  mem_->Add(2, ValueType::kValue, "j", "jv");
  mem_->Add(4, ValueType::kValue, "ka", "kav");  // "k" is a prefix of "ka"
  mem_->Add(6, ValueType::kValue, "", "empty key");
  mem_->Add(8, ValueType::kValue, std::string("k\0", 2), "");  // empty value

  EXPECT_EQ("none", Get("k", 0));
  EXPECT_EQ("v:v1", Get("k", 1));
  EXPECT_EQ("v:v1", Get("k", 2));
  EXPECT_EQ("v:v3", Get("k", 3));
  EXPECT_EQ("v:v3", Get("k", 4));
  EXPECT_EQ("del", Get("k", 5));
  EXPECT_EQ("del", Get("k", 6));
  EXPECT_EQ("v:v7", Get("k", 7));
  EXPECT_EQ("v:v7", Get("k", kMaxSequenceNumber));

  EXPECT_EQ("none", Get("j", 1));
  EXPECT_EQ("v:jv", Get("j", 2));
  EXPECT_EQ("none", Get("ka", 3));
  EXPECT_EQ("v:kav", Get("ka", 100));
  EXPECT_EQ("v:empty key", Get("", 6));
  EXPECT_EQ("none", Get("", 5));
  EXPECT_EQ("v:", Get(std::string("k\0", 2), 8));

  EXPECT_EQ("none", Get("a", 100));    // before every key
  EXPECT_EQ("none", Get("kb", 100));   // between keys
  EXPECT_EQ("none", Get("zzz", 100));  // after every key

  EXPECT_EQ(8u, mem_->NumEntries());
  EXPECT_EQ(1u, mem_->NumDeletions());
}

TEST_P(MemTableTest, LargeValues) {
  const std::string big(200 * 1024, 'b');
  mem_->Add(1, ValueType::kValue, "big", big);
  mem_->Add(2, ValueType::kValue, std::string(70 * 1024, 'K'), "small");
  std::string value;
  Status s;
  ASSERT_TRUE(mem_->Get(LookupKey("big", 1), &value, &s));
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(big, value);
  EXPECT_EQ("v:small", Get(std::string(70 * 1024, 'K'), 2));
  EXPECT_GE(mem_->ApproximateMemoryUsage(), big.size() + 70 * 1024);
}

// A random mix of puts and deletes over a small key space, checked against a
// model: Get at random snapshots and the iterator over internal keys in both
// directions, with seeks.
TEST_P(MemTableTest, RandomAgainstModel) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  struct Entry {
    std::string ikey;
    std::string value;
  };
  std::vector<Entry> model;
  struct Version {
    SequenceNumber seq;
    bool deleted;
    std::string value;
  };
  std::map<std::string, std::vector<Version>> versions;
  std::vector<std::string> user_keys;
  for (int i = 0; i < 60; i++) user_keys.push_back(test::RandomString(&rnd, rnd.Uniform(6)));

  SequenceNumber seq = 1;
  for (int i = 0; i < 1500; i++) {
    const std::string& k = user_keys[rnd.Uniform(user_keys.size())];
    seq += 1 + rnd.Uniform(3);
    const bool del = rnd.OneIn(4);
    const std::string v = del ? std::string() : test::RandomString(&rnd, rnd.Skewed(8));
    mem_->Add(seq, del ? ValueType::kDeletion : ValueType::kValue, k, v);
    versions[k].push_back({seq, del, v});
    std::string ikey;
    AppendInternalKey(&ikey,
                      ParsedInternalKey(k, seq, del ? ValueType::kDeletion : ValueType::kValue));
    model.push_back({ikey, v});
  }
  ASSERT_EQ(model.size(), mem_->NumEntries());

  // Get: the newest version <= snapshot.
  for (int i = 0; i < 3000; i++) {
    const std::string& k = user_keys[rnd.Uniform(user_keys.size())];
    const SequenceNumber snap = rnd.Uniform(seq + 2);
    std::string want = "none";
    for (const Version& v : versions[k]) {
      if (v.seq <= snap) want = v.deleted ? "del" : "v:" + v.value;
    }
    ASSERT_EQ(want, Get(k, snap)) << "snapshot " << snap;
  }

  std::sort(model.begin(), model.end(),
            [&](const Entry& a, const Entry& b) { return icmp_.Compare(a.ikey, b.ikey) < 0; });
  std::unique_ptr<Iterator> it(mem_->NewIterator());
  EXPECT_TRUE(it->status().ok());
  it->SeekToFirst();
  for (const Entry& e : model) {
    ASSERT_TRUE(it->Valid());
    ASSERT_EQ(Slice(e.ikey), it->key());
    ASSERT_EQ(Slice(e.value), it->value());
    it->Next();
  }
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  for (auto e = model.rbegin(); e != model.rend(); ++e) {
    ASSERT_TRUE(it->Valid());
    ASSERT_EQ(Slice(e->ikey), it->key());
    ASSERT_EQ(Slice(e->value), it->value());
    it->Prev();
  }
  EXPECT_FALSE(it->Valid());

  auto less = [&](const Entry& a, const std::string& b) { return icmp_.Compare(a.ikey, b) < 0; };
  for (int i = 0; i < 500; i++) {
    std::string target;
    AppendInternalKey(&target, ParsedInternalKey(user_keys[rnd.Uniform(user_keys.size())],
                                                 rnd.Uniform(seq + 2), kValueTypeForSeek));
    auto lb = std::lower_bound(model.begin(), model.end(), target, less);
    it->Seek(target);
    if (lb == model.end()) {
      ASSERT_FALSE(it->Valid());
    } else {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(Slice(lb->ikey), it->key());
    }
    // SeekForPrev: the last entry <= target.
    auto ub = std::upper_bound(
        model.begin(), model.end(), target,
        [&](const std::string& a, const Entry& b) { return icmp_.Compare(a, b.ikey) < 0; });
    it->SeekForPrev(target);
    if (ub == model.begin()) {
      ASSERT_FALSE(it->Valid());
    } else {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(Slice(std::prev(ub)->ikey), it->key());
      it->Prev();
      ASSERT_EQ(std::prev(ub) != model.begin(), it->Valid());
    }
  }
}

TEST_P(MemTableTest, IteratorSeekSemanticsOnInternalKeys) {
  mem_->Add(10, ValueType::kValue, "b", "b10");
  mem_->Add(20, ValueType::kValue, "b", "b20");
  std::unique_ptr<Iterator> it(mem_->NewIterator());
  ParsedInternalKey parsed;
  // (b, 15): the first entry >= it is (b, 10); the last entry <= it is (b, 20).
  const std::string target = InternalKey("b", 15, kValueTypeForSeek).Encode().ToString();
  it->Seek(target);
  ASSERT_TRUE(it->Valid());
  ASSERT_TRUE(ParseInternalKey(it->key(), &parsed));
  EXPECT_EQ(10u, parsed.sequence);
  EXPECT_EQ("b10", it->value().ToString());
  it->SeekForPrev(target);
  ASSERT_TRUE(it->Valid());
  ASSERT_TRUE(ParseInternalKey(it->key(), &parsed));
  EXPECT_EQ(20u, parsed.sequence);
  EXPECT_EQ(ValueType::kValue, parsed.type);
  EXPECT_EQ("b", parsed.user_key.ToString());
  // An exact match is found by both.
  const std::string exact = InternalKey("b", 20, ValueType::kValue).Encode().ToString();
  it->Seek(exact);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(Slice(exact), it->key());
  it->SeekForPrev(exact);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(Slice(exact), it->key());
}

TEST_P(MemTableTest, MemoryUsageGrows) {
  const size_t empty = mem_->ApproximateMemoryUsage();
  // Usage grows a block at a time: past a few huge blocks too.
  const size_t block = HugeArena() ? Arena::kHugeBlockSize : Arena::kDefaultBlockSize;
  const int n = HugeArena() ? 50000 : 5000;
  size_t last = empty;
  size_t payload = 0;
  for (int i = 0; i < n; i++) {
    const std::string k = "key" + std::to_string(i);
    const std::string v(100, static_cast<char>('a' + i % 26));
    mem_->Add(static_cast<SequenceNumber>(i + 1), ValueType::kValue, k, v);
    payload += k.size() + v.size();
    const size_t now = mem_->ApproximateMemoryUsage();
    ASSERT_GE(now, last);
    last = now;
  }
  EXPECT_GT(last, empty);
  // The first block, allocated empty, may hold up to a block of the payload.
  EXPECT_GE(last - empty + block, payload);
  // Not wildly more than the payload plus per-entry overhead.
  EXPECT_LT(last - empty, payload + static_cast<size_t>(n) * 64 + 128 * 1024 + block);
}

// A write group's entries prepared by one thread and linked by several at
// once (MemTableLinkJob) give the same memtable as adding them one by one:
// many versions of few keys (so threads race for the same gaps), tombstones,
// empty keys and values, keys that are prefixes of others; Get and the
// counters agree; a helper that comes after the job is done links nothing.
TEST_P(MemTableTest, LinkJobOnManyThreadsMatchesAdd) {
  Random rnd(test::TestSeed());
  WriteBatch batch;
  for (int i = 0; i < 20000; i++) {
    std::string key = "k" + std::to_string(rnd.Uniform(300));
    if (rnd.OneIn(10)) key.resize(rnd.Uniform(static_cast<uint32_t>(key.size()) + 1));
    if (rnd.OneIn(8)) {
      batch.Delete(key);
    } else {
      batch.Put(key, std::string(rnd.Uniform(40), static_cast<char>('a' + i % 26)));
    }
  }
  WriteBatchInternal::SetSequence(&batch, 100);

  // The reference is added one by one into the other index.
  MemTableRef want(icmp_, HugeArena(), !BTree());
  ASSERT_TRUE(WriteBatchInternal::InsertInto(&batch, want.mem).ok());

  auto job = std::make_shared<MemTableLinkJob>(mem_.mem);
  ASSERT_TRUE(WriteBatchInternal::PrepareInto(&batch, mem_.mem, job->entries()).ok());
  ASSERT_EQ(batch.Count(), job->entries()->size());
  EXPECT_EQ(want->NumEntries(), mem_->NumEntries());
  EXPECT_EQ(want->NumDeletions(), mem_->NumDeletions());
  std::vector<std::thread> helpers;
  for (int t = 0; t < 4; t++) helpers.emplace_back([job] { job->Help(); });
  job->Help();
  job->Wait();
  for (auto& t : helpers) t.join();
  job->Help();  // late: nothing left

  std::unique_ptr<Iterator> a(want->NewIterator());
  std::unique_ptr<Iterator> b(mem_->NewIterator());
  size_t n = 0;
  for (a->SeekToFirst(), b->SeekToFirst(); a->Valid(); a->Next(), b->Next(), n++) {
    ASSERT_TRUE(b->Valid()) << n;
    ASSERT_EQ(a->key().ToString(), b->key().ToString()) << n;
    ASSERT_EQ(a->value().ToString(), b->value().ToString()) << n;
  }
  EXPECT_FALSE(b->Valid());
  EXPECT_EQ(batch.Count(), n);
  for (int k = 0; k < 300; k += 7) {
    const std::string key = "k" + std::to_string(k);
    for (SequenceNumber seq : {SequenceNumber{100}, SequenceNumber{10000}, kMaxSequenceNumber}) {
      std::string wv = "untouched", gv = "untouched";
      Status ws, gs;
      ASSERT_EQ(want->Get(LookupKey(key, seq), &wv, &ws), mem_->Get(LookupKey(key, seq), &gv, &gs));
      EXPECT_EQ(wv, gv);
      EXPECT_EQ(ws.ToString(), gs.ToString());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ComparatorsArenasAndIndexes, MemTableTest,
                         testing::Combine(testing::Bool(), testing::Bool(), testing::Bool()),
                         [](const testing::TestParamInfo<std::tuple<bool, bool, bool>>& info) {
                           return std::string(std::get<0>(info.param) ? "Bytewise" : "Reverse") +
                                  (std::get<1>(info.param) ? "HugeArena" : "") +
                                  (std::get<2>(info.param) ? "BTree" : "SkipList");
                         });

TEST(MemTableRefTest, EmptyMemTable) {
  InternalKeyComparator icmp(BytewiseComparator());
  MemTable* mem = new MemTable(icmp);
  mem->Ref();
  mem->Ref();
  mem->Unref();  // still referenced: must stay usable
  std::string value;
  Status s;
  EXPECT_FALSE(mem->Get(LookupKey("x", 100), &value, &s));
  EXPECT_EQ(0u, mem->NumEntries());
  EXPECT_EQ(0u, mem->NumDeletions());
  std::unique_ptr<Iterator> it(mem->NewIterator());
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it.reset();
  mem->Unref();  // deletes (checked by ASan/LSan)
}

}  // namespace
}  // namespace accelkv
