#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "accelkv/cache.h"
#include "table/block.h"
#include "table/format.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "table/table_test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

using test::IKey;
using KVs = std::vector<std::pair<std::string, std::string>>;

class TableTest : public testing::Test {
 protected:
  TableTest() : icmp_(BytewiseComparator()) {
    options_.comparator = &icmp_;
    options_.user_comparator = BytewiseComparator();
  }

  std::string Build(const KVs& kvs, uint64_t* estimate_before_finish = nullptr) {
    test::StringSink sink;
    TableBuilder b(options_, &sink);
    for (const auto& [k, v] : kvs) b.Add(k, v);
    if (estimate_before_finish != nullptr) *estimate_before_finish = b.EstimatedFileSize();
    EXPECT_TRUE(b.Finish().ok());
    EXPECT_EQ(sink.contents().size(), b.FileSize());
    EXPECT_EQ(kvs.size(), b.NumEntries());
    return sink.contents();
  }

  Status Open(const std::string& bytes, std::unique_ptr<Table>* table) {
    return Table::Open(options_, std::make_unique<test::StringSource>(bytes), bytes.size(), table);
  }

  // Writes bytes to a real file and opens it mmap'd through the POSIX Env.
  Status OpenMapped(const std::string& bytes, std::unique_ptr<Table>* table) {
    const std::string fname = dir_.File("t" + std::to_string(files_++) + ".sst");
    Status s = WriteStringToFile(Env::Default(), bytes, fname, /*sync=*/false);
    RandomAccessFileOptions mmap;
    mmap.use_mmap_reads = true;
    std::unique_ptr<RandomAccessFile> file;
    if (s.ok()) s = Env::Default()->NewRandomAccessFile(fname, mmap, &file);
    if (s.ok()) s = Table::Open(options_, std::move(file), bytes.size(), table);
    return s;
  }

  // Random internal keys: several versions per user key, some deletions.
  KVs RandomEntries(Random* rnd, int user_keys) {
    std::map<std::string, std::string, std::function<bool(const std::string&, const std::string&)>>
        m([this](const std::string& a, const std::string& b) { return icmp_.Compare(a, b) < 0; });
    for (int i = 0; i < user_keys; ++i) {
      std::string u(1 + rnd->Uniform(12), '\0');
      for (char& c : u) c = static_cast<char>('a' + rnd->Uniform(26));
      const int versions = 1 + static_cast<int>(rnd->Uniform(3));
      for (int v = 0; v < versions; ++v) {
        const ValueType t = rnd->OneIn(5) ? ValueType::kDeletion : ValueType::kValue;
        std::string value = t == ValueType::kDeletion ? "" : std::string(rnd->Uniform(100), 'v');
        m[IKey(u, 1 + rnd->Uniform(1000000), t)] = value;
      }
    }
    return KVs(m.begin(), m.end());
  }

  InternalKeyComparator icmp_;
  TableOptions options_;
  test::TempDir dir_;
  int files_ = 0;
};

TEST_F(TableTest, RoundTripWithPropertiesAndSeeks) {
  Random rnd(test::TestSeed());
  options_.block_size = 256;
  const KVs kvs = RandomEntries(&rnd, 1500);
  uint64_t estimate = 0;
  const std::string file = Build(kvs, &estimate);
  EXPECT_EQ(file.size(), estimate);  // the estimate is exact just before Finish
  EXPECT_EQ(file, Build(kvs));       // deterministic

  std::shared_ptr<Cache> cache = NewLRUCache(1 << 20);
  options_.block_cache = cache.get();
  std::unique_ptr<Table> table;
  ASSERT_TRUE(Open(file, &table).ok());
  ASSERT_TRUE(table->VerifyAllBlocks().ok());

  const TableProperties& p = table->properties();
  TableProperties want;
  for (const auto& [k, v] : kvs) {
    ParsedInternalKey pk;
    ASSERT_TRUE(ParseInternalKey(k, &pk));
    want.num_deletions += pk.type == ValueType::kDeletion;
    want.raw_key_bytes += k.size();
    want.raw_value_bytes += v.size();
    want.smallest_seqno =
        want.num_entries == 0 ? pk.sequence : std::min(want.smallest_seqno, pk.sequence);
    want.largest_seqno = std::max(want.largest_seqno, pk.sequence);
    want.num_entries++;
  }
  EXPECT_EQ(want.num_entries, p.num_entries);
  EXPECT_EQ(want.num_deletions, p.num_deletions);
  EXPECT_EQ(want.raw_key_bytes, p.raw_key_bytes);
  EXPECT_EQ(want.raw_value_bytes, p.raw_value_bytes);
  EXPECT_EQ(want.smallest_seqno, p.smallest_seqno);
  EXPECT_EQ(want.largest_seqno, p.largest_seqno);
  EXPECT_EQ(kvs.front().first, p.smallest_key);
  EXPECT_EQ(kvs.back().first, p.largest_key);
  EXPECT_EQ("accelkv.BytewiseComparator", p.comparator_name);
  EXPECT_GT(p.num_data_blocks, 10u);
  EXPECT_LT(p.data_bytes, file.size());
  EXPECT_NE(std::string::npos,
            p.ToString().find("accelkv.num-entries: " + std::to_string(kvs.size())));

  std::unique_ptr<Iterator> it(table->NewIterator(ReadOptions()));
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_EQ(kvs[i].first, it->key().ToString());
    ASSERT_EQ(kvs[i].second, it->value().ToString());
  }
  ASSERT_EQ(kvs.size(), i);
  for (it->SeekToLast(); it->Valid(); it->Prev()) ASSERT_EQ(kvs[--i].first, it->key().ToString());
  ASSERT_EQ(0u, i);
  ASSERT_TRUE(it->status().ok());
  // Every data block went through the cache, charged by its size.
  EXPECT_EQ(p.data_bytes - 5 * p.num_data_blocks, cache->TotalCharge());

  auto less = [this](const std::pair<std::string, std::string>& a, const std::string& b) {
    return icmp_.Compare(a.first, b) < 0;
  };
  uint64_t last_offset = 0;
  for (int round = 0; round < 1000; ++round) {
    // Targets: existing keys, or a user key with a random sequence number.
    std::string target = kvs[rnd.Uniform(kvs.size())].first;
    if (rnd.OneIn(2)) target = IKey(ExtractUserKey(target).ToString(), rnd.Uniform(2000000));
    if (rnd.OneIn(4))
      target = IKey(std::string(1 + rnd.Uniform(3), static_cast<char>('a' + rnd.Uniform(27))), 5);
    auto lb = std::lower_bound(kvs.begin(), kvs.end(), target, less);
    it->Seek(target);
    ASSERT_EQ(lb != kvs.end(), it->Valid());
    if (lb != kvs.end()) {
      ASSERT_EQ(lb->first, it->key().ToString());
    }
    // SeekForPrev: last entry <= target.
    auto ub = lb;
    if (ub != kvs.end() && icmp_.Compare(ub->first, target) == 0) ++ub;
    it->SeekForPrev(target);
    ASSERT_EQ(ub != kvs.begin(), it->Valid());
    if (ub != kvs.begin()) {
      ASSERT_EQ(std::prev(ub)->first, it->key().ToString());
      it->Next();  // direction switch inside the two-level iterator
      ASSERT_EQ(ub != kvs.end(), it->Valid());
      if (ub != kvs.end()) {
        ASSERT_EQ(ub->first, it->key().ToString());
      }
    }

    // InternalGet: the first entry >= target, unless the filter rules it out.
    bool called = false;
    std::string got_key;
    ASSERT_TRUE(table
                    ->InternalGet(ReadOptions(), target,
                                  [&](const Slice& k, const Slice& v) {
                                    called = true;
                                    got_key = k.ToString();
                                    EXPECT_EQ(lb->second, v.ToString());
                                  })
                    .ok());
    const bool user_key_present =
        lb != kvs.end() && ExtractUserKey(lb->first) == ExtractUserKey(target);
    if (user_key_present) {
      ASSERT_TRUE(called);
      ASSERT_EQ(lb->first, got_key);
    } else if (called) {
      ASSERT_TRUE(lb != kvs.end());
      ASSERT_EQ(lb->first, got_key);
    }
    (void)last_offset;
  }
  // Offsets grow with the key.
  for (size_t j = 0; j < kvs.size(); j += 37) {
    const uint64_t off = table->ApproximateOffsetOf(kvs[j].first);
    ASSERT_GE(off, last_offset);
    last_offset = off;
  }
  EXPECT_LE(table->ApproximateOffsetOf(IKey("zzzzzzzzzzzzzz", 1)), file.size());
}

TEST_F(TableTest, FilterRulesOutMostAbsentKeys) {
  KVs kvs;
  for (int i = 0; i < 2000; ++i) kvs.push_back({IKey("key" + std::to_string(100000 + i), 7), "v"});
  std::unique_ptr<Table> table;
  ASSERT_TRUE(Open(Build(kvs), &table).ok());
  int may_match = 0;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(table->KeyMayMatch("key" + std::to_string(100000 + i)));
    may_match += table->KeyMayMatch("absent" + std::to_string(i));
  }
  EXPECT_LT(may_match, 60);
  options_.bloom_bits_per_key = 0;
  ASSERT_TRUE(Open(Build(kvs), &table).ok());
  EXPECT_TRUE(table->KeyMayMatch("absent1"));
}

TEST_F(TableTest, EmptyTable) {
  const std::string file = Build({});
  std::unique_ptr<Table> table;
  ASSERT_TRUE(Open(file, &table).ok());
  EXPECT_TRUE(table->VerifyAllBlocks().ok());
  EXPECT_EQ(0u, table->properties().num_entries);
  EXPECT_EQ(0u, table->properties().num_data_blocks);
  EXPECT_EQ("", table->properties().smallest_key);
  std::unique_ptr<Iterator> it(table->NewIterator(ReadOptions()));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(IKey("a", 1));
  EXPECT_FALSE(it->Valid());
  bool called = false;
  ASSERT_TRUE(table
                  ->InternalGet(ReadOptions(), IKey("a", 1),
                                [&](const Slice&, const Slice&) { called = true; })
                  .ok());
  EXPECT_FALSE(called);
  Footer footer;
  ASSERT_TRUE(footer.DecodeFrom(Slice(file).ToString().substr(file.size() - 64), file.size()).ok());
  EXPECT_EQ(0u, footer.filter_handle.offset);
  EXPECT_EQ(0u, footer.filter_handle.size);
  EXPECT_EQ(0u, footer.properties_handle.offset);
}

// Reads the number of entries of each data block straight from the file.
std::vector<uint32_t> BlockEntryCounts(const std::string& file) {
  std::vector<uint32_t> counts;
  test::StringSource src(file);
  Footer footer;
  EXPECT_TRUE(footer.DecodeFrom(Slice(file.data() + file.size() - 64, 64), file.size()).ok());
  BlockContents contents;
  EXPECT_TRUE(ReadBlock(src, footer.index_handle, &contents).ok());
  std::unique_ptr<Block> index;
  EXPECT_TRUE(Block::Parse(std::move(contents), &index).ok());
  for (uint32_t i = 0; i < index->num_entries(); ++i) {
    Slice v = index->value(i);
    BlockHandle h;
    EXPECT_TRUE(h.DecodeFrom(&v).ok());
    std::unique_ptr<Block> block;
    EXPECT_TRUE(ReadBlock(src, h, &contents).ok());
    EXPECT_TRUE(Block::Parse(std::move(contents), &block).ok());
    std::string a, b;
    EXPECT_EQ(index->key(i, &a),
              block->key(block->num_entries() - 1, &b));  // last key, unshortened
    counts.push_back(block->num_entries());
  }
  return counts;
}

TEST_F(TableTest, DataBlockBoundaryRule) {
  Random rnd(test::TestSeed());
  for (size_t block_size : {1, 7, 64, 300, 4096}) {
    options_.block_size = block_size;
    KVs kvs;
    for (int i = 0; i < 400; ++i) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "%08d", i);
      kvs.push_back({IKey(buf, 1), std::string(rnd.Skewed(9), 'x')});
    }
    // Expected partition from the prefix sums P_i.
    std::vector<uint32_t> want;
    uint64_t prev = 0, next = 0;
    for (size_t i = 0; i < kvs.size(); ++i) {
      if (i == 0 || next / block_size != prev / block_size) want.push_back(0);
      want.back()++;
      prev = next;
      next += kvs[i].first.size() + kvs[i].second.size() + 8;
    }
    EXPECT_EQ(want, BlockEntryCounts(Build(kvs))) << "block_size " << block_size;
  }
}

// EstimatedFileSizeBound never undercuts EstimatedFileSize, so a split
// decision taken through OutputSplitter::OutputBytes (the bound unless it
// reaches the limit) is the exact estimate's for limits on both sides of the
// exact value; the fixed and variable parts sum to the estimate.
TEST_F(TableTest, SizeBoundGivesTheExactSplitDecisionAtTheBoundary) {
  Random rnd(test::TestSeed());
  for (int round = 0; round < 20; ++round) {
    options_.block_size = 64 + rnd.Uniform(2048);
    options_.bloom_bits_per_key = round % 3 == 0 ? 0 : 10;
    test::StringSink sink;
    TableBuilder b(options_, &sink);
    for (const auto& [k, v] : RandomEntries(&rnd, 150)) {
      b.Add(k, v);
      const uint64_t exact = b.EstimatedFileSize();
      const uint64_t bound = b.EstimatedFileSizeBound();
      ASSERT_LE(exact, bound);
      for (uint64_t limit : {exact - 1, exact, exact + 1, bound, bound + 1}) {
        const uint64_t current = bound < limit ? bound : exact;  // OutputSplitter::OutputBytes
        ASSERT_EQ(exact >= limit, current >= limit) << limit;
      }
      TableSizeState st;
      st.offset = 1000;
      st.index_block_size = 77;
      st.data_block_size = round % 2 == 0 ? 0 : 300;
      st.filter_encoded_size = round % 3 == 0 ? 0 : 69;
      st.last_key_size = k.size();
      st.comparator_name_size = 25;
      st.smallest_key_size = 9;
      ASSERT_EQ(EstimateTableFileSize(st),
                TableSizeFixedPart(25, 9, k.size()) + TableSizeVariablePart(st));
    }
    ASSERT_TRUE(b.Finish().ok());
  }
}

TEST_F(TableTest, TruncatedFilesAreCorruption) {
  options_.block_size = 64;
  KVs kvs;
  for (int i = 0; i < 30; ++i) kvs.push_back({IKey("k" + std::to_string(100 + i), 9), "value"});
  const std::string file = Build(kvs);
  for (size_t len = 0; len < file.size(); ++len) {
    std::unique_ptr<Table> table;
    const std::string cut = file.substr(0, len);
    Status s = Open(cut, &table);
    ASSERT_TRUE(s.IsCorruption()) << len << " " << s.ToString();
    ASSERT_EQ(nullptr, table);
  }
}

TEST_F(TableTest, EveryByteFlipIsDetected) {
  options_.block_size = 64;
  KVs kvs;
  for (int i = 0; i < 12; ++i) kvs.push_back({IKey("k" + std::to_string(100 + i), 9), "value"});
  const std::string file = Build(kvs);
  for (size_t pos = 0; pos < file.size(); ++pos) {
    std::string bad = file;
    bad[pos] ^= 0x04;
    std::unique_ptr<Table> table;
    Status s = Open(bad, &table);
    if (s.ok()) s = table->VerifyAllBlocks();
    ASSERT_TRUE(s.IsCorruption()) << "flip at " << pos << ": " << s.ToString();
  }
}

TEST_F(TableTest, CorruptDataBlockSurfacesInReads) {
  options_.block_size = 64;
  KVs kvs;
  for (int i = 0; i < 12; ++i) kvs.push_back({IKey("k" + std::to_string(100 + i), 9), "value"});
  std::string file = Build(kvs);
  file[3] ^= 0x01;  // inside data block 0
  std::unique_ptr<Table> table;
  ASSERT_TRUE(Open(file, &table).ok());
  Status s = table->InternalGet(ReadOptions(), kvs[0].first, [](const Slice&, const Slice&) {
    ADD_FAILURE() << "corrupt block yielded an entry";
  });
  EXPECT_TRUE(s.IsCorruption());
  std::unique_ptr<Iterator> it(table->NewIterator(ReadOptions()));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  EXPECT_TRUE(table->VerifyAllBlocks().IsCorruption());
}

TEST_F(TableTest, MmapReadsMatchPreadAndBypassTheBlockCache) {
  Random rnd(test::TestSeed());
  options_.block_size = 256;
  const KVs kvs = RandomEntries(&rnd, 1000);
  const std::string file = Build(kvs);
  std::shared_ptr<Cache> cache = NewLRUCache(1 << 20);
  options_.block_cache = cache.get();
  std::unique_ptr<Table> table;
  ASSERT_TRUE(OpenMapped(file, &table).ok());
  ASSERT_TRUE(table->VerifyAllBlocks().ok());
  for (bool verify : {true, false}) {
    ReadOptions ro;
    ro.verify_checksums = verify;
    std::unique_ptr<Iterator> it(table->NewIterator(ro));
    size_t i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
      ASSERT_EQ(kvs[i].first, it->key().ToString());
      ASSERT_EQ(kvs[i].second, it->value().ToString());
    }
    ASSERT_EQ(kvs.size(), i);
    ASSERT_TRUE(it->status().ok());
    for (size_t j = 0; j < kvs.size(); j += 7) {
      std::string got;
      ASSERT_TRUE(table
                      ->InternalGet(ro, kvs[j].first,
                                    [&](const Slice& k, const Slice& v) {
                                      if (k == Slice(kvs[j].first)) got = v.ToString();
                                    })
                      .ok());
      ASSERT_EQ(kvs[j].second, got);
    }
  }
  // Blocks of a mapped file point into the mapping; none went into the cache.
  EXPECT_EQ(0u, cache->TotalCharge());
}

TEST_F(TableTest, MmapReadsDetectCorruptionWhenVerifying) {
  options_.block_size = 64;
  KVs kvs;
  for (int i = 0; i < 12; ++i) kvs.push_back({IKey("k" + std::to_string(100 + i), 9), "value"});
  std::string file = Build(kvs);
  const size_t value_at = file.find("value");  // a value byte of data block 0
  ASSERT_NE(std::string::npos, value_at);
  file[value_at] = 'V';
  std::unique_ptr<Table> table;
  ASSERT_TRUE(OpenMapped(file, &table).ok());
  ReadOptions ro;
  bool called = false;
  auto record = [&](const Slice&, const Slice&) { called = true; };
  EXPECT_TRUE(table->InternalGet(ro, kvs[0].first, record).IsCorruption());
  EXPECT_FALSE(called);
  std::unique_ptr<Iterator> it(table->NewIterator(ro));
  it->SeekToFirst();
  EXPECT_TRUE(it->status().IsCorruption());
  EXPECT_TRUE(table->VerifyAllBlocks().IsCorruption());
  // verify_checksums = false skips the CRC of uncached blocks (LevelDB's
  // default): the bytes are served as they are.
  ro.verify_checksums = false;
  std::string got;
  ASSERT_TRUE(
      table
          ->InternalGet(ro, kvs[0].first, [&](const Slice&, const Slice& v) { got = v.ToString(); })
          .ok());
  EXPECT_EQ("Value", got);
}

// A mapped data block whose checksum a cache-filling read verified counts as
// cached: later such reads of it through the same Table skip the CRC, as a
// block cache hit does. Reads that do not fill the cache (compaction's)
// verify every time, and a newly opened Table verifies again.
TEST_F(TableTest, MmapReadsVerifyEachBlockOnceLikeTheCache) {
  options_.block_size = 64;
  KVs kvs;
  for (int i = 0; i < 12; ++i) kvs.push_back({IKey("k" + std::to_string(100 + i), 9), "value"});
  const std::string file = Build(kvs);
  const size_t value_at = file.find("value");  // a value byte of data block 0
  ASSERT_NE(std::string::npos, value_at);
  const std::string fname = dir_.File("t" + std::to_string(files_) + ".sst");
  std::unique_ptr<Table> table;
  ASSERT_TRUE(OpenMapped(file, &table).ok());
  auto get = [&](const ReadOptions& ro, std::string* got) {
    got->clear();
    return table->InternalGet(ro, kvs[0].first, [&](const Slice& k, const Slice& v) {
      if (k == Slice(kvs[0].first)) *got = v.ToString();
    });
  };
  std::string got;
  ASSERT_TRUE(get(ReadOptions(), &got).ok());  // verifies block 0
  ASSERT_EQ("value", got);
  {
    std::unique_ptr<Iterator> it(table->NewIterator(ReadOptions()));  // verifies the rest
    size_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    ASSERT_TRUE(it->status().ok());
    ASSERT_EQ(kvs.size(), n);
  }

  // The file changes under the mapping (the page cache is shared).
  ASSERT_TRUE(WriteStringToFile(Env::Default(),
                                file.substr(0, value_at) + "V" + file.substr(value_at + 1), fname,
                                /*sync=*/false)
                  .ok());
  ReadOptions cached;
  ASSERT_TRUE(get(cached, &got).ok());  // block 0 was verified: served as a cache hit would be
  EXPECT_EQ("Value", got);
  {
    std::unique_ptr<Iterator> it(table->NewIterator(cached));
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid()) << it->status().ToString();
    EXPECT_EQ("Value", it->value().ToString());
  }
  ReadOptions no_fill;
  no_fill.fill_cache = false;
  EXPECT_TRUE(get(no_fill, &got).IsCorruption());
  {
    std::unique_ptr<Iterator> it(table->NewIterator(no_fill));
    it->SeekToFirst();
    EXPECT_TRUE(it->status().IsCorruption());
  }
  EXPECT_TRUE(table->VerifyAllBlocks().IsCorruption());

  // A Table opened anew verifies again.
  RandomAccessFileOptions mmap;
  mmap.use_mmap_reads = true;
  std::unique_ptr<RandomAccessFile> rfile;
  ASSERT_TRUE(Env::Default()->NewRandomAccessFile(fname, mmap, &rfile).ok());
  ASSERT_TRUE(Table::Open(options_, std::move(rfile), file.size(), &table).ok());
  EXPECT_TRUE(get(cached, &got).IsCorruption());
}

TEST_F(TableTest, CachedBlocksAreVerifiedEvenWithoutVerifyChecksums) {
  options_.block_size = 64;
  KVs kvs;
  for (int i = 0; i < 12; ++i) kvs.push_back({IKey("k" + std::to_string(100 + i), 9), "value"});
  std::string file = Build(kvs);
  file[file.find("value")] = 'V';
  std::shared_ptr<Cache> cache = NewLRUCache(1 << 20);
  options_.block_cache = cache.get();
  std::unique_ptr<Table> table;
  ASSERT_TRUE(Open(file, &table).ok());  // pread: blocks enter the cache
  ReadOptions ro;
  ro.verify_checksums = false;
  Status s = table->InternalGet(ro, kvs[0].first, [](const Slice&, const Slice&) {});
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_EQ(0u, cache->TotalCharge());
}

// Point lookups find their data block through the index keys' user keys
// minus their shared prefix, cut to 8 bytes (bytewise comparator). Checks
// every probe against a search of the whole sorted list.
class TableLookupTest : public TableTest {
 protected:
  TableLookupTest() {
    options_.block_size = 64;
    options_.bloom_bits_per_key = 0;  // every lookup reaches the index
  }

  // Versions of each user key (several blocks' worth for some), with values.
  KVs Entries(Random* rnd, const std::vector<std::string>& users) {
    auto less = [this](const std::string& a, const std::string& b) {
      return icmp_.Compare(a, b) < 0;
    };
    std::map<std::string, std::string, decltype(less)> m(less);
    for (size_t i = 0; i < users.size(); ++i) {
      for (int v = 0; v < 1 + static_cast<int>(rnd->Uniform(12)); ++v) {
        m[IKey(users[i], 10 + rnd->Uniform(1000))] =
            "v" + std::to_string(i) + "." + std::to_string(v);
      }
    }
    return KVs(m.begin(), m.end());
  }

  void CheckLookups(const KVs& kvs, const std::vector<std::string>& probes) {
    std::unique_ptr<Table> table;
    ASSERT_TRUE(Open(Build(kvs), &table).ok());
    ASSERT_GT(table->properties().num_data_blocks, 50u);
    for (const std::string& u : probes) {
      for (SequenceNumber seq : {SequenceNumber{1}, SequenceNumber{500}, SequenceNumber{5000}}) {
        const std::string probe = IKey(u, seq);
        auto want = std::lower_bound(
            kvs.begin(), kvs.end(), probe,
            [&](const auto& kv, const std::string& k) { return icmp_.Compare(kv.first, k) < 0; });
        std::string got_key;
        std::string got_value;
        ASSERT_TRUE(table
                        ->InternalGet(ReadOptions(), probe,
                                      [&](const Slice& k, const Slice& v) {
                                        got_key = k.ToString();
                                        got_value = v.ToString();
                                      })
                        .ok());
        const std::string where =
            "user key '" + u + "' (" + std::to_string(u.size()) + " bytes) @" + std::to_string(seq);
        if (want == kvs.end()) {
          EXPECT_EQ("", got_key) << where;
        } else {
          EXPECT_EQ(want->first, got_key) << where;
          EXPECT_EQ(want->second, got_value) << where;
        }
      }
    }
  }
};

// Keys sharing long prefixes, keys shorter than 8 bytes with and without
// trailing zero bytes, the empty key: no prefix shared by the whole table.
TEST_F(TableLookupTest, PrefixTiesAndShortKeys) {
  Random rnd(test::TestSeed());
  const std::string alphabet("\0ab\xff", 4);
  std::vector<std::string> users;
  for (int i = 0; i < 300; ++i) {
    std::string u;
    if (rnd.OneIn(2)) {
      u = "commonprefix";
      for (uint32_t c = rnd.Uniform(10); c > 0; --c) u.push_back(alphabet[rnd.Uniform(4)]);
    } else if (rnd.OneIn(3)) {
      u.assign(rnd.Uniform(9), '\0');  // "", "\0", "\0\0", ...
    } else {
      u.assign(1 + rnd.Uniform(9), 'x');
    }
    users.push_back(u);
  }
  KVs kvs = Entries(&rnd, users);
  users.insert(users.end(), {"commonprefi", "commonprefiz", "zzzzzzzzzzzz", "w"});
  CheckLookups(kvs, users);
}

// db_bench-style keys (zero-padded decimal): the whole table shares a long
// prefix, and probes fall before it, after it, or share only part of it.
TEST_F(TableLookupTest, TableWideSharedPrefix) {
  Random rnd(test::TestSeed());
  std::vector<std::string> users;
  for (int i = 0; i < 400; ++i) {
    std::string digits = std::to_string(100000 + rnd.Uniform(900000));
    users.push_back(std::string(16 - digits.size(), '0') + digits);
  }
  KVs kvs = Entries(&rnd, users);
  users.insert(users.end(),
               {"", "0", "0000000000", "00000000000", "0000000000099999", "0000000001000000",
                "00000000009999999", "000000000100000", "1", "0000000000100000\xff"});
  CheckLookups(kvs, users);
}

TEST_F(TableTest, FillCacheFalseLeavesCacheEmpty) {
  std::shared_ptr<Cache> cache = NewLRUCache(1 << 20, 0);
  options_.block_cache = cache.get();
  options_.block_size = 64;
  KVs kvs;
  for (int i = 0; i < 50; ++i) kvs.push_back({IKey("k" + std::to_string(100 + i), 9), "value"});
  std::unique_ptr<Table> table;
  ASSERT_TRUE(Open(Build(kvs), &table).ok());
  ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<Iterator> it(table->NewIterator(ro));
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(kvs.size(), n);
  EXPECT_EQ(0u, cache->TotalCharge());
  int found = 0;
  ASSERT_TRUE(
      table
          ->InternalGet(ReadOptions(), kvs[7].first,
                        [&](const Slice& k, const Slice&) { found += k == Slice(kvs[7].first); })
          .ok());
  EXPECT_EQ(1, found);
  EXPECT_GT(cache->TotalCharge(), 0u);
}

}  // namespace
}  // namespace accelkv
