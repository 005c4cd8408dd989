// Version: Get/MultiGet/AddIterators over real tables (MemEnv) checked
// against a model, OverlapInLevel, GetOverlappingInputs, compaction scores,
// pending compaction bytes and DebugString.
#include "version/version.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "accelkv/env.h"
#include "table/table_builder.h"
#include "table/table_cache.h"
#include "testutil/test_util.h"
#include "util/filename.h"
#include "util/random.h"

namespace accelkv {
namespace {

struct Entry {
  std::string user_key;
  SequenceNumber seq;
  ValueType type;
  std::string value;
};

class VersionTest : public ::testing::Test {
 protected:
  VersionTest() : env_(NewMemEnv(Env::Default())), icmp_(BytewiseComparator()) {
    EXPECT_TRUE(env_->CreateDir(kDb).ok());
    options_.env = env_.get();
    options_.num_levels = 4;
    options_.level0_file_num_compaction_trigger = 4;
    options_.max_bytes_for_level_base = 10000;
    options_.max_bytes_for_level_multiplier = 10;
    table_options_.comparator = &icmp_;
    table_options_.user_comparator = BytewiseComparator();
    table_options_.block_size = 256;  // several blocks per table
    cache_ = std::make_unique<TableCache>(kDb, env_.get(), table_options_, 100);
    files_.resize(options_.num_levels);
  }

  ~VersionTest() override {
    if (version_ != nullptr) version_->Unref();
  }

  // Writes a table holding entries (any order) and adds it to `level`.
  FileMetaPtr AddTable(int level, std::vector<Entry> entries) {
    std::sort(entries.begin(), entries.end(), [this](const Entry& a, const Entry& b) {
      return icmp_.Compare(InternalKey(a.user_key, a.seq, a.type).Encode(),
                           InternalKey(b.user_key, b.seq, b.type).Encode()) < 0;
    });
    auto f = std::make_shared<FileMetaData>();
    f->number = next_number_++;
    std::unique_ptr<WritableFile> file;
    EXPECT_TRUE(env_->NewWritableFile(TableFileName(kDb, f->number), &file).ok());
    TableBuilder builder(table_options_, file.get());
    for (const Entry& e : entries) {
      builder.Add(InternalKey(e.user_key, e.seq, e.type).Encode(), e.value);
      all_.push_back(e);
    }
    EXPECT_TRUE(builder.Finish().ok());
    EXPECT_TRUE(file->Close().ok());
    f->file_size = builder.FileSize();
    f->smallest = InternalKey(entries.front().user_key, entries.front().seq, entries.front().type);
    f->largest = InternalKey(entries.back().user_key, entries.back().seq, entries.back().type);
    f->smallest_seqno = kMaxSequenceNumber;
    for (const Entry& e : entries) {
      f->smallest_seqno = std::min(f->smallest_seqno, e.seq);
      f->largest_seqno = std::max(f->largest_seqno, e.seq);
    }
    f->num_entries = entries.size();
    files_[level].push_back(f);
    return f;
  }

  // Builds the version from files_ (L0 in insertion order reversed: newest
  // first; other levels sorted by smallest key).
  Version* Build() {
    std::vector<LevelFiles> files = files_;
    std::reverse(files[0].begin(), files[0].end());
    for (size_t level = 1; level < files.size(); level++) {
      std::sort(files[level].begin(), files[level].end(),
                [this](const FileMetaPtr& a, const FileMetaPtr& b) {
                  return icmp_.Compare(a->smallest.Encode(), b->smallest.Encode()) < 0;
                });
    }
    if (version_ != nullptr) version_->Unref();
    version_ = new Version(&options_, &icmp_, cache_.get(), std::move(files));
    version_->Ref();
    return version_;
  }

  // The model answer: newest entry of user_key with seq <= snapshot.
  Status ModelGet(const std::string& user_key, SequenceNumber snapshot, std::string* value) {
    const Entry* best = nullptr;
    for (const Entry& e : all_) {
      if (e.user_key == user_key && e.seq <= snapshot && (best == nullptr || e.seq > best->seq)) {
        best = &e;
      }
    }
    if (best == nullptr || best->type == ValueType::kDeletion) return Status::NotFound("");
    *value = best->value;
    return Status::OK();
  }

  Status Get(const std::string& user_key, SequenceNumber snapshot, std::string* value) {
    LookupKey key(user_key, snapshot);
    return version_->Get(ReadOptions(), key, value);
  }

  static constexpr const char* kDb = "/db";
  std::unique_ptr<Env> env_;
  InternalKeyComparator icmp_;
  Options options_;
  TableOptions table_options_;
  std::unique_ptr<TableCache> cache_;
  std::vector<LevelFiles> files_;
  std::vector<Entry> all_;
  uint64_t next_number_ = 10;
  Version* version_ = nullptr;
};

constexpr ValueType kPut = ValueType::kValue;
constexpr ValueType kDel = ValueType::kDeletion;

TEST_F(VersionTest, GetNewestFirstAcrossLevels) {
  AddTable(2, {{"a", 1, kPut, "a1"}, {"b", 2, kPut, "b2"}, {"c", 3, kPut, "c3"}});
  AddTable(2, {{"x", 4, kPut, "x4"}, {"z", 5, kPut, "z5"}});
  AddTable(1, {{"b", 10, kDel, ""}, {"c", 11, kPut, "c11"}});
  AddTable(0, {{"a", 20, kPut, "a20"}, {"c", 21, kDel, ""}});  // older L0 file
  AddTable(0, {{"a", 30, kPut, "a30"}, {"b", 31, kPut, "b31"}});
  Build();

  std::string v;
  ASSERT_TRUE(Get("a", 100, &v).ok());
  EXPECT_EQ(v, "a30");
  ASSERT_TRUE(Get("a", 25, &v).ok());  // snapshot below the newest L0 file
  EXPECT_EQ(v, "a20");
  ASSERT_TRUE(Get("a", 19, &v).ok());
  EXPECT_EQ(v, "a1");
  EXPECT_TRUE(Get("a", 0, &v).IsNotFound());
  ASSERT_TRUE(Get("b", 100, &v).ok());
  EXPECT_EQ(v, "b31");
  EXPECT_TRUE(Get("b", 30, &v).IsNotFound());  // L1 tombstone hides L2's b
  ASSERT_TRUE(Get("b", 9, &v).ok());
  EXPECT_EQ(v, "b2");
  EXPECT_TRUE(Get("c", 100, &v).IsNotFound());  // L0 tombstone
  ASSERT_TRUE(Get("c", 20, &v).ok());
  EXPECT_EQ(v, "c11");
  ASSERT_TRUE(Get("z", 100, &v).ok());
  EXPECT_EQ(v, "z5");
  // Inside a file's range but absent: the table hands back the next key,
  // whose user key differs, and the search goes on (and ends NotFound).
  EXPECT_TRUE(Get("bb", 100, &v).IsNotFound());
  EXPECT_TRUE(Get("y", 100, &v).IsNotFound());
  EXPECT_TRUE(Get("zz", 100, &v).IsNotFound());
  EXPECT_TRUE(Get("", 100, &v).IsNotFound());
}

TEST_F(VersionTest, GetReportsMissingTable) {
  FileMetaPtr f = AddTable(1, {{"k", 1, kPut, "v"}});
  ASSERT_TRUE(env_->RemoveFile(TableFileName(kDb, f->number)).ok());
  Build();
  std::string v;
  Status s = Get("k", 10, &v);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(s.IsNotFound()) << s.ToString();
  // A key outside the file's range never touches it.
  EXPECT_TRUE(Get("a", 10, &v).IsNotFound());
}

// A random layered database: L3 oldest ... L0 newest, sequence numbers
// increasing upward, several files per level.
class VersionModelTest : public VersionTest {
 protected:
  void BuildRandom(Random* rnd) {
    for (int i = 0; i < 300; i++) keys_.push_back("key" + std::to_string(1000 + i * 3));
    SequenceNumber seq = 1;
    // Levels 3, 2, 1: disjoint files, each covering a slice of the key space.
    for (int level = 3; level >= 1; level--) {
      const int nfiles = 2 + static_cast<int>(rnd->Uniform(4));
      const size_t per = keys_.size() / nfiles;
      for (int f = 0; f < nfiles; f++) {
        std::vector<Entry> entries;
        for (size_t k = f * per; k < (f + 1) * per; k++) {
          if (!rnd->OneIn(3)) continue;
          const ValueType type = rnd->OneIn(5) ? kDel : kPut;
          entries.push_back({keys_[k], seq++, type, "v" + std::to_string(seq) + "-" + keys_[k]});
          if (rnd->OneIn(4)) {  // an older version of the same key in the same file
            entries.push_back({keys_[k], seq++, kPut, "old" + std::to_string(seq)});
          }
        }
        if (!entries.empty()) AddTable(level, entries);
      }
    }
    // L0: overlapping files, oldest first.
    for (int f = 0; f < 4; f++) {
      std::vector<Entry> entries;
      for (size_t k = rnd->Uniform(50); k < keys_.size(); k += 1 + rnd->Uniform(20)) {
        entries.push_back({keys_[k], seq++, rnd->OneIn(4) ? kDel : kPut, "l0-" + keys_[k]});
      }
      AddTable(0, entries);
    }
    max_seq_ = seq;
    Build();
  }

  std::vector<std::string> keys_;
  SequenceNumber max_seq_ = 0;
};

TEST_F(VersionModelTest, GetAndMultiGetMatchModel) {
  Random rnd(test::TestSeed());
  BuildRandom(&rnd);
  for (int round = 0; round < 6; round++) {
    const SequenceNumber snapshot = round == 0 ? kMaxSequenceNumber : rnd.Uniform(max_seq_ + 1);
    std::vector<std::string> user_keys;
    for (int i = 0; i < 200; i++) {
      // Present keys, keys between them, and keys outside every range.
      const std::string& k = keys_[rnd.Uniform(keys_.size())];
      user_keys.push_back(rnd.OneIn(5) ? k + "x" : (rnd.OneIn(20) ? "zzz" : k));
    }
    std::vector<LookupKey> lookups;
    lookups.reserve(user_keys.size());
    for (const std::string& k : user_keys) lookups.emplace_back(k, snapshot);
    std::vector<const LookupKey*> ptrs;
    for (const LookupKey& l : lookups) ptrs.push_back(&l);
    std::vector<std::string> values;
    std::vector<Status> statuses;
    version_->MultiGet(ReadOptions(), ptrs, &values, &statuses);
    ASSERT_EQ(values.size(), user_keys.size());
    ASSERT_EQ(statuses.size(), user_keys.size());
    for (size_t i = 0; i < user_keys.size(); i++) {
      std::string want;
      Status ws = ModelGet(user_keys[i], snapshot, &want);
      std::string got;
      Status gs = Get(user_keys[i], snapshot, &got);
      ASSERT_EQ(ws.ok(), gs.ok()) << user_keys[i] << "@" << snapshot << ": " << gs.ToString();
      ASSERT_EQ(ws.ok(), statuses[i].ok()) << user_keys[i] << ": " << statuses[i].ToString();
      if (ws.ok()) {
        EXPECT_EQ(got, want);
        EXPECT_EQ(values[i], want);
      } else {
        EXPECT_TRUE(gs.IsNotFound());
        EXPECT_TRUE(statuses[i].IsNotFound());
      }
    }
  }
}

TEST_F(VersionModelTest, MultiGetEmptyAndMissingTable) {
  Random rnd(test::TestSeed());
  BuildRandom(&rnd);
  std::vector<std::string> values{"junk"};
  std::vector<Status> statuses;
  version_->MultiGet(ReadOptions(), {}, &values, &statuses);
  EXPECT_TRUE(values.empty());
  EXPECT_TRUE(statuses.empty());

  // Remove the files of L1: keys whose lookup reaches L1 fail, with the
  // table's error, the others still answer.
  for (const FileMetaPtr& f : files_[1]) {
    ASSERT_TRUE(env_->RemoveFile(TableFileName(kDb, f->number)).ok());
  }
  cache_ = std::make_unique<TableCache>(kDb, env_.get(), table_options_, 100);
  Build();
  std::vector<LookupKey> lookups;
  for (const std::string& k : keys_) lookups.emplace_back(k, kMaxSequenceNumber);
  std::vector<const LookupKey*> ptrs;
  for (const LookupKey& l : lookups) ptrs.push_back(&l);
  version_->MultiGet(ReadOptions(), ptrs, &values, &statuses);
  int errors = 0;
  for (size_t i = 0; i < keys_.size(); i++) {
    std::string got;
    Status gs = Get(keys_[i], kMaxSequenceNumber, &got);
    EXPECT_EQ(gs.code(), statuses[i].code()) << keys_[i];
    if (!statuses[i].ok() && !statuses[i].IsNotFound()) errors++;
  }
  EXPECT_GT(errors, 0);
}

TEST_F(VersionModelTest, IteratorsYieldEveryEntry) {
  Random rnd(test::TestSeed());
  BuildRandom(&rnd);
  std::vector<Iterator*> iters;
  version_->AddIterators(ReadOptions(), &iters);
  // One per L0 file plus one per non-empty deeper level.
  size_t expected_iters = files_[0].size();
  for (size_t level = 1; level < files_.size(); level++) expected_iters += !files_[level].empty();
  ASSERT_EQ(iters.size(), expected_iters);

  std::multiset<std::string> want;
  for (const Entry& e : all_)
    want.insert(InternalKey(e.user_key, e.seq, e.type).Encode().ToString());
  std::multiset<std::string> got;
  for (Iterator* it : iters) {
    std::string prev;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string k = it->key().ToString();
      if (!prev.empty()) {
        EXPECT_LT(icmp_.Compare(prev, k), 0);
      }
      prev = k;
      got.insert(k);
    }
    EXPECT_TRUE(it->status().ok());
  }
  EXPECT_EQ(got, want);

  // The concatenating iterator of L1 seeks and steps across file boundaries.
  Iterator* l1 = iters[files_[0].size()];
  std::vector<std::string> l1_keys;
  for (l1->SeekToLast(); l1->Valid(); l1->Prev()) l1_keys.push_back(l1->key().ToString());
  std::reverse(l1_keys.begin(), l1_keys.end());
  ASSERT_FALSE(l1_keys.empty());
  for (size_t i = 0; i < l1_keys.size(); i += 7) {
    l1->Seek(l1_keys[i]);
    ASSERT_TRUE(l1->Valid());
    EXPECT_EQ(l1->key().ToString(), l1_keys[i]);
    l1->SeekForPrev(l1_keys[i]);
    ASSERT_TRUE(l1->Valid());
    EXPECT_EQ(l1->key().ToString(), l1_keys[i]);
  }
  l1->Seek(InternalKey("zzzz", kMaxSequenceNumber, kPut).Encode());
  EXPECT_FALSE(l1->Valid());
  l1->SeekForPrev(InternalKey("a", 0, kDel).Encode());
  EXPECT_FALSE(l1->Valid());
  for (Iterator* it : iters) delete it;
}

// Versions of metadata only (no tables) for the range and score tests.
class VersionMetaTest : public ::testing::Test {
 protected:
  VersionMetaTest() : icmp_(BytewiseComparator()) {
    options_.num_levels = 4;
    options_.level0_file_num_compaction_trigger = 4;
    options_.max_bytes_for_level_base = 1000;
    options_.max_bytes_for_level_multiplier = 10;
    files_.resize(4);
  }
  ~VersionMetaTest() override {
    if (v_ != nullptr) v_->Unref();
  }
  void Add(int level, uint64_t number, const std::string& smallest, const std::string& largest,
           uint64_t size = 100, SequenceNumber seq = 100) {
    auto f = std::make_shared<FileMetaData>();
    f->number = number;
    f->file_size = size;
    f->smallest = InternalKey(smallest, seq, kPut);
    f->largest = InternalKey(largest, seq, kPut);
    f->smallest_seqno = f->largest_seqno = seq;
    files_[level].push_back(f);
  }
  Version* Build() {
    if (v_ != nullptr) v_->Unref();
    v_ = new Version(&options_, &icmp_, nullptr, files_);
    v_->Ref();
    return v_;
  }
  std::vector<uint64_t> Inputs(int level, const char* begin, const char* end) {
    std::unique_ptr<InternalKey> b, e;
    if (begin != nullptr) b = std::make_unique<InternalKey>(begin, kMaxSequenceNumber, kPut);
    if (end != nullptr) e = std::make_unique<InternalKey>(end, 0, kDel);
    std::vector<FileMetaPtr> inputs;
    v_->GetOverlappingInputs(level, b.get(), e.get(), &inputs);
    std::vector<uint64_t> numbers;
    for (const FileMetaPtr& f : inputs) numbers.push_back(f->number);
    return numbers;
  }
  bool Overlap(int level, const char* smallest, const char* largest) {
    Slice s(smallest != nullptr ? smallest : "");
    Slice l(largest != nullptr ? largest : "");
    return v_->OverlapInLevel(level, smallest != nullptr ? &s : nullptr,
                              largest != nullptr ? &l : nullptr);
  }

  InternalKeyComparator icmp_;
  Options options_;
  std::vector<LevelFiles> files_;
  Version* v_ = nullptr;
};

using Numbers = std::vector<uint64_t>;

TEST_F(VersionMetaTest, OverlapInLevel) {
  Add(1, 1, "150", "200");
  Add(1, 2, "200", "250", 100, 90);  // shares a boundary user key at older sequences
  Add(1, 3, "300", "350");
  Add(1, 4, "400", "450");
  Add(0, 5, "100", "180");
  Add(0, 6, "500", "600");
  Build();
  EXPECT_FALSE(Overlap(1, "100", "149"));
  EXPECT_TRUE(Overlap(1, "100", "150"));
  EXPECT_TRUE(Overlap(1, "251", "300"));
  EXPECT_FALSE(Overlap(1, "251", "299"));
  EXPECT_TRUE(Overlap(1, "350", "399"));
  EXPECT_FALSE(Overlap(1, "451", "500"));
  EXPECT_FALSE(Overlap(1, "451", nullptr));
  EXPECT_TRUE(Overlap(1, "449", nullptr));
  EXPECT_TRUE(Overlap(1, nullptr, "150"));
  EXPECT_FALSE(Overlap(1, nullptr, "149"));
  EXPECT_TRUE(Overlap(1, nullptr, nullptr));
  EXPECT_FALSE(Overlap(2, nullptr, nullptr));
  EXPECT_TRUE(Overlap(0, "180", "181"));
  EXPECT_FALSE(Overlap(0, "181", "499"));
  EXPECT_TRUE(Overlap(0, "181", nullptr));
  EXPECT_TRUE(Overlap(0, nullptr, "100"));
  EXPECT_FALSE(Overlap(0, nullptr, "0"));
}

TEST_F(VersionMetaTest, GetOverlappingInputs) {
  Add(1, 1, "150", "200");
  Add(1, 2, "200", "250", 100, 90);
  Add(1, 3, "300", "350");
  Add(1, 4, "400", "450");
  Build();
  EXPECT_EQ(Inputs(1, "100", "149"), Numbers{});
  EXPECT_EQ(Inputs(1, "100", "150"), (Numbers{1}));
  EXPECT_EQ(Inputs(1, "200", "200"), (Numbers{1, 2}));
  EXPECT_EQ(Inputs(1, "251", "399"), (Numbers{3}));
  EXPECT_EQ(Inputs(1, nullptr, "300"), (Numbers{1, 2, 3}));
  EXPECT_EQ(Inputs(1, "350", nullptr), (Numbers{3, 4}));
  EXPECT_EQ(Inputs(1, nullptr, nullptr), (Numbers{1, 2, 3, 4}));
  EXPECT_EQ(Inputs(1, "451", nullptr), Numbers{});
  EXPECT_EQ(Inputs(2, nullptr, nullptr), Numbers{});
}

TEST_F(VersionMetaTest, GetOverlappingInputsWidensLevel0) {
  // Chain: 10 [a..c] overlaps 11 [c..e] overlaps 12 [e..g]; 13 [x..z] apart.
  Add(0, 13, "x", "z", 100, 40);
  Add(0, 12, "e", "g", 100, 30);
  Add(0, 11, "c", "e", 100, 20);
  Add(0, 10, "a", "c", 100, 10);
  Build();
  auto sorted = [](Numbers n) {
    std::sort(n.begin(), n.end());
    return n;
  };
  EXPECT_EQ(sorted(Inputs(0, "a", "a")), (Numbers{10, 11, 12}));
  EXPECT_EQ(sorted(Inputs(0, "f", "f")), (Numbers{10, 11, 12}));
  EXPECT_EQ(sorted(Inputs(0, "h", "w")), Numbers{});
  EXPECT_EQ(sorted(Inputs(0, "y", nullptr)), (Numbers{13}));
  EXPECT_EQ(sorted(Inputs(0, nullptr, nullptr)), (Numbers{10, 11, 12, 13}));
  // Appends: existing contents of *inputs are kept.
  std::vector<FileMetaPtr> inputs{files_[0][0]};
  v_->GetOverlappingInputs(0, nullptr, nullptr, &inputs);
  EXPECT_EQ(inputs.size(), 5u);
}

TEST_F(VersionMetaTest, ScoresAndMaxBytes) {
  EXPECT_EQ(MaxBytesForLevel(options_, 1), 1000u);
  EXPECT_EQ(MaxBytesForLevel(options_, 2), 10000u);
  EXPECT_EQ(MaxBytesForLevel(options_, 3), 100000u);
  Add(0, 1, "a", "b");
  Add(0, 2, "a", "b");
  Add(1, 3, "a", "b", 1500);
  Add(2, 4, "a", "b", 2500);
  Add(3, 5, "a", "b", 1000000);
  Build();
  EXPECT_DOUBLE_EQ(v_->compaction_score(0), 0.5);
  EXPECT_DOUBLE_EQ(v_->compaction_score(1), 1.5);
  EXPECT_DOUBLE_EQ(v_->compaction_score(2), 0.25);
  EXPECT_DOUBLE_EQ(v_->compaction_score(3), 0.0);  // the bottom level never scores
  EXPECT_EQ(v_->NumFiles(0), 2);
  EXPECT_EQ(v_->NumBytes(0), 200u);
  EXPECT_EQ(v_->NumBytes(3), 1000000u);
}

TEST_F(VersionMetaTest, PendingCompactionBytes) {
  // Nothing over target: 0.
  Add(0, 1, "a", "b", 100);
  Add(1, 2, "a", "b", 900);
  Build();
  EXPECT_EQ(v_->estimated_pending_compaction_bytes(), 0u);

  // L1 over target by 500 with L2 holding 3000: 500 * (1 + 3000/1500).
  files_[1].clear();
  Add(1, 3, "a", "b", 1500);
  Add(2, 4, "c", "d", 3000);
  Build();
  EXPECT_EQ(v_->estimated_pending_compaction_bytes(), 1500u);

  // L0 at its trigger: L0 bytes (4 x 100) + L1 bytes (1500), then L1 holds
  // 1900 -> excess 900 * (1 + 3000/1900), and L2 (3000 + 900 < 10000) fits.
  Add(0, 5, "a", "b", 100);
  Add(0, 6, "a", "b", 100);
  Add(0, 7, "a", "b", 100);
  Build();
  const double l1 = 900.0 * (1.0 + 3000.0 / 1900.0);
  EXPECT_EQ(v_->estimated_pending_compaction_bytes(), static_cast<uint64_t>(400 + 1500 + l1));

  // An excess with an empty next level is carried down, not counted: L1
  // 5000 (excess 4000) over an empty L2: L2 then holds 4000 < 10000.
  files_.assign(4, LevelFiles());
  Add(1, 8, "a", "b", 5000);
  Add(3, 9, "a", "b", 50);
  Build();
  EXPECT_EQ(v_->estimated_pending_compaction_bytes(), 0u);
  // With L2 at 7000: L1's excess counts, 4000 * (1 + 7000 / 5000), and L2
  // then holds 7000 + 4000 = 11000: excess 1000 * (1 + 50 / 11000).
  Add(2, 10, "a", "b", 7000);
  Build();
  EXPECT_EQ(
      v_->estimated_pending_compaction_bytes(),
      static_cast<uint64_t>(4000.0 * (1.0 + 7000.0 / 5000.0) + 1000.0 * (1.0 + 50.0 / 11000.0)));
}

TEST_F(VersionMetaTest, DebugString) {
  Add(0, 7, "a", "c", 123);
  Add(2, 9, "k", "m", 456);
  Build();
  EXPECT_EQ(v_->DebugString(),
            "L0 #7 123 ['a'@100:put .. 'c'@100:put]\n"
            "L2 #9 456 ['k'@100:put .. 'm'@100:put]\n");
}

}  // namespace
}  // namespace accelkv
