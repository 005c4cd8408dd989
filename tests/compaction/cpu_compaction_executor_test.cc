// CpuCompactionExecutor over MemEnv with real tables: randomized jobs checked
// against an oracle of the GC rule, output splitting, determinism, corrupt
// inputs and injected write/sync/open failures.
#include "compaction/cpu_compaction_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "accelkv/comparator.h"
#include "compaction/compaction_test_util.h"
#include "env/fault_injection_env.h"
#include "testutil/test_util.h"
#include "util/filename.h"

namespace accelkv {
namespace {

using test::Entry;
using test::MakeFile;
using KVs = std::vector<std::pair<std::string, std::string>>;

std::string Key(uint64_t i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%06llu", static_cast<unsigned long long>(i));
  return buf;
}

// n random versions of random keys below key_space; sequences from
// *next_seq upward; values of random length.
std::vector<Entry> RandomEntries(Random* rnd, int n, uint64_t key_space, SequenceNumber* next_seq,
                                 size_t max_value = 100) {
  std::vector<Entry> out;
  for (int i = 0; i < n; i++) {
    Entry e;
    e.user_key = Key(rnd->Uniform(key_space));
    e.seq = (*next_seq)++;
    e.type = rnd->OneIn(5) ? ValueType::kDeletion : ValueType::kValue;
    if (e.type == ValueType::kValue) e.value = test::RandomString(rnd, rnd->Uniform(max_value + 1));
    out.push_back(std::move(e));
  }
  test::SortEntries(&out);
  return out;
}

// Splits sorted entries into files of about `per_file` entries, never
// between versions of one user key (a level >= 1 layout).
std::vector<std::vector<Entry>> SplitIntoFiles(const std::vector<Entry>& entries, size_t per_file) {
  std::vector<std::vector<Entry>> files;
  for (const Entry& e : entries) {
    if (files.empty() ||
        (files.back().size() >= per_file && files.back().back().user_key != e.user_key)) {
      files.emplace_back();
    }
    files.back().push_back(e);
  }
  return files;
}

// What the GC rule keeps of `all`, by brute force.
KVs Oracle(std::vector<Entry> all, const std::vector<SequenceNumber>& snapshots,
           const std::vector<std::pair<std::string, std::string>>& deeper_ranges) {
  test::SortEntries(&all);
  auto stripe = [&](SequenceNumber s) {
    for (SequenceNumber snap : snapshots) {
      if (snap >= s) return snap;
    }
    return kMaxSequenceNumber;
  };
  KVs out;
  for (size_t i = 0; i < all.size(); i++) {
    const Entry& e = all[i];
    bool shadowed = false;
    for (size_t j = 0; j < i; j++) {
      if (all[j].user_key == e.user_key && stripe(all[j].seq) == stripe(e.seq)) shadowed = true;
    }
    if (shadowed) continue;
    if (e.type == ValueType::kDeletion &&
        (snapshots.empty() || stripe(e.seq) == snapshots.front())) {
      bool in_deeper = false;
      for (const auto& [lo, hi] : deeper_ranges) {
        if (lo <= e.user_key && e.user_key <= hi) in_deeper = true;
      }
      if (!in_deeper) continue;
    }
    out.emplace_back(e.InternalKeyString(), e.value);
  }
  return out;
}

class CpuCompactionExecutorTest : public testing::Test {
 protected:
  CpuCompactionExecutorTest() : mem_env_(NewMemEnv(Env::Default())), fault_env_(mem_env_.get()) {
    env_ = mem_env_.get();
    topt_.comparator = &icmp_;
    topt_.user_comparator = BytewiseComparator();
    topt_.block_size = 512;
    EXPECT_TRUE(mem_env_->CreateDir(dbname_).ok());
  }

  // Writes one input table; remembers its number as an input.
  FileMetaPtr Write(const std::vector<Entry>& entries) {
    Status s;
    FileMetaPtr f = test::WriteTable(env_, dbname_, topt_, next_input_++, entries, &s);
    EXPECT_TRUE(s.ok()) << s.ToString();
    input_numbers_.insert(f->number);
    return f;
  }

  Status RunJob(const Compaction& c, const std::vector<SequenceNumber>& snapshots,
                CompactionJobResult* result, uint64_t first_output = 1000) {
    TableCache cache(dbname_, env_, topt_, 100);
    uint64_t next = first_output;
    CompactionJobSpec spec;
    spec.dbname = dbname_;
    spec.env = env_;
    spec.table_options = topt_;
    spec.table_cache = &cache;
    spec.compaction = &c;
    spec.snapshots = snapshots;
    spec.internal_comparator = &icmp_;
    spec.new_file_number = [&next] { return next++; };
    CpuCompactionExecutor executor;
    EXPECT_STREQ("cpu", executor.Name());
    return executor.Run(spec, result);
  }

  // Every entry of the outputs, in order; checks each file's metadata.
  KVs ReadOutputs(const CompactionJobResult& result) {
    KVs all;
    for (const FileMetaData& f : result.outputs) {
      KVs entries;
      Status s = test::ReadTable(env_, dbname_, topt_, f.number, &entries);
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (entries.empty()) {
        ADD_FAILURE() << "empty output " << f.number;
        continue;
      }
      uint64_t size = 0;
      EXPECT_TRUE(env_->GetFileSize(TableFileName(dbname_, f.number), &size).ok());
      EXPECT_EQ(size, f.file_size);
      EXPECT_EQ(entries.front().first, f.smallest.Encode().ToString());
      EXPECT_EQ(entries.back().first, f.largest.Encode().ToString());
      EXPECT_EQ(entries.size(), f.num_entries);
      uint64_t deletions = 0;
      SequenceNumber lo = kMaxSequenceNumber, hi = 0;
      for (const auto& [k, v] : entries) {
        ParsedInternalKey p;
        EXPECT_TRUE(ParseInternalKey(k, &p));
        if (p.type == ValueType::kDeletion) deletions++;
        lo = std::min(lo, p.sequence);
        hi = std::max(hi, p.sequence);
      }
      EXPECT_EQ(deletions, f.num_deletions);
      EXPECT_EQ(lo, f.smallest_seqno);
      EXPECT_EQ(hi, f.largest_seqno);
      all.insert(all.end(), entries.begin(), entries.end());
    }
    // Consecutive outputs never share a user key.
    for (size_t i = 1; i < result.outputs.size(); i++) {
      EXPECT_LT(result.outputs[i - 1].largest.user_key().ToString(),
                result.outputs[i].smallest.user_key().ToString());
    }
    return all;
  }

  // Table files in the directory that are not inputs.
  std::set<uint64_t> NonInputTables() {
    std::vector<std::string> names;
    EXPECT_TRUE(env_->GetChildren(dbname_, &names).ok());
    std::set<uint64_t> out;
    for (const std::string& name : names) {
      uint64_t number;
      FileType type;
      if (ParseFileName(name, &number, &type) && type == FileType::kTableFile &&
          input_numbers_.count(number) == 0) {
        out.insert(number);
      }
    }
    return out;
  }

  static std::set<uint64_t> Listed(const CompactionJobResult& r) {
    std::set<uint64_t> out;
    for (const FileMetaData& f : r.outputs) out.insert(f.number);
    return out;
  }

  void RemoveOutputs(const CompactionJobResult& r) {
    for (const FileMetaData& f : r.outputs) {
      EXPECT_TRUE(env_->RemoveFile(TableFileName(dbname_, f.number)).ok());
    }
  }

  InternalKeyComparator icmp_{BytewiseComparator()};
  std::unique_ptr<Env> mem_env_;
  FaultInjectionEnv fault_env_;
  Env* env_;
  TableOptions topt_;
  const std::string dbname_ = "/db";
  uint64_t next_input_ = 1;
  std::set<uint64_t> input_numbers_;
};

// A random job: overlapping L0 files (or disjoint level-1 files) over older
// output-level files, random snapshots, and maybe deeper files.
struct RandomJob {
  std::unique_ptr<Compaction> compaction;
  std::vector<Entry> all;
  std::vector<SequenceNumber> snapshots;
  std::vector<std::pair<std::string, std::string>> deeper_ranges;
};

TEST_F(CpuCompactionExecutorTest, RandomizedJobsMatchTheOracle) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  for (int round = 0; round < 24; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    const int level = round % 3 == 2 ? 1 : 0;
    const bool bottommost = round % 2 == 0;
    const uint64_t key_space = 50 + rnd.Uniform(400);
    SequenceNumber next_seq = 1;
    RandomJob job;
    Compaction::Params p;
    p.level = level;
    p.output_level = level + 1;
    // Output level first (older data).
    const int out_entries = static_cast<int>(rnd.Uniform(600));
    for (const auto& file :
         SplitIntoFiles(RandomEntries(&rnd, out_entries, key_space, &next_seq), 150)) {
      p.inputs[1].push_back(Write(file));
      job.all.insert(job.all.end(), file.begin(), file.end());
    }
    if (level == 0) {
      const int n = 1 + static_cast<int>(rnd.Uniform(5));
      for (int i = 0; i < n; i++) {
        auto file =
            RandomEntries(&rnd, 1 + static_cast<int>(rnd.Uniform(400)), key_space, &next_seq);
        p.inputs[0].insert(p.inputs[0].begin(), Write(file));  // newest first
        job.all.insert(job.all.end(), file.begin(), file.end());
      }
    } else {
      auto entries =
          RandomEntries(&rnd, 1 + static_cast<int>(rnd.Uniform(800)), key_space, &next_seq);
      for (const auto& file : SplitIntoFiles(entries, 1 + rnd.Uniform(200))) {
        p.inputs[0].push_back(Write(file));
      }
      job.all.insert(job.all.end(), entries.begin(), entries.end());
    }
    if (!bottommost) {
      LevelFiles deeper;
      for (uint64_t k = rnd.Uniform(20); k < key_space; k += 10 + rnd.Uniform(40)) {
        const uint64_t hi = k + rnd.Uniform(10);
        job.deeper_ranges.emplace_back(Key(k), Key(hi));
        deeper.push_back(MakeFile(900 + k, Key(k), Key(hi), 1000));
      }
      p.deeper_levels = {{}, deeper};
    }
    std::set<SequenceNumber> snaps;
    for (int i = static_cast<int>(rnd.Uniform(4)); i > 0; i--)
      snaps.insert(1 + rnd.Uniform(next_seq));
    job.snapshots.assign(snaps.begin(), snaps.end());
    p.max_output_file_size = rnd.OneIn(2) ? (8u << 10) : (1u << 20);
    const Compaction c(std::move(p), &icmp_);

    CompactionJobResult result;
    Status s = RunJob(c, job.snapshots, &result);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const KVs expected = Oracle(job.all, job.snapshots, job.deeper_ranges);
    const KVs actual = ReadOutputs(result);
    ASSERT_EQ(expected.size(), actual.size());
    for (size_t i = 0; i < expected.size(); i++) {
      ASSERT_EQ(expected[i], actual[i]) << "entry " << i;
    }
    EXPECT_EQ(job.all.size(), result.input_entries);
    EXPECT_EQ(expected.size(), result.output_entries);
    EXPECT_EQ(job.all.size() - expected.size(), result.dropped_entries);
    EXPECT_EQ(c.TotalInputBytes(), result.bytes_read);
    uint64_t written = 0;
    for (const FileMetaData& f : result.outputs) written += f.file_size;
    EXPECT_EQ(written, result.bytes_written);
    for (const char* stage : {"read", "merge", "drop", "encode", "write"}) {
      EXPECT_EQ(1u, result.stage_micros.count(stage)) << stage;
    }
    EXPECT_GE(result.cpu_seconds, 0.0);
    EXPECT_EQ(Listed(result), NonInputTables());
    RemoveOutputs(result);
  }
}

TEST_F(CpuCompactionExecutorTest, OutputIsSplitBySize) {
  Random rnd(test::TestSeed());
  SequenceNumber next_seq = 1;
  // Many versions per key (kept by snapshots), so split points meet keys
  // with several versions.
  auto entries = RandomEntries(&rnd, 3000, 300, &next_seq);
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  p.inputs[0] = {Write(entries)};
  p.max_output_file_size = 4096;
  const Compaction c(std::move(p), &icmp_);
  std::vector<SequenceNumber> snapshots;
  for (SequenceNumber s = 100; s < next_seq; s += 100) snapshots.push_back(s);
  CompactionJobResult result;
  ASSERT_TRUE(RunJob(c, snapshots, &result).ok());
  ASSERT_GT(result.outputs.size(), 10u);
  for (size_t i = 0; i + 1 < result.outputs.size(); i++) {
    // Closed once the estimate reached the limit, before growing much more.
    EXPECT_GE(result.outputs[i].file_size, 4096u * 3 / 4) << i;
    EXPECT_LE(result.outputs[i].file_size, 4096u + 2048u) << i;
  }
  const KVs actual = ReadOutputs(result);
  EXPECT_EQ(Oracle(entries, snapshots, {}), actual);
}

TEST_F(CpuCompactionExecutorTest, OutputIsSplitAtGrandparentBoundaries) {
  Random rnd(test::TestSeed());
  SequenceNumber next_seq = 1;
  auto entries = RandomEntries(&rnd, 1000, 1000, &next_seq);
  Compaction::Params p;
  p.level = 1;
  p.output_level = 2;
  p.inputs[0] = {Write(entries)};
  // Grandparents of 100 bytes every 50 keys; more than 150 bytes splits.
  for (uint64_t k = 0; k < 1000; k += 50) {
    p.grandparents.push_back(MakeFile(500 + k, Key(k), Key(k + 10), 100));
  }
  p.max_grandparent_overlap_bytes = 150;
  const Compaction c(std::move(p), &icmp_);
  CompactionJobResult result;
  ASSERT_TRUE(RunJob(c, {}, &result).ok());
  // Replay the splitter over the output keys: every file boundary is a split.
  const KVs actual = ReadOutputs(result);
  OutputSplitter splitter(&c);
  std::vector<size_t> splits;
  for (size_t i = 0; i < actual.size(); i++) {
    if (splitter.ShouldStopBefore(actual[i].first, i == 0 ? 0 : 1) && i > 0) splits.push_back(i);
  }
  ASSERT_EQ(splits.size() + 1, result.outputs.size());
  size_t first = 0;
  for (size_t i = 0; i < splits.size(); i++) {
    first += result.outputs[i].num_entries;
    EXPECT_EQ(splits[i], first);
  }
  EXPECT_GT(result.outputs.size(), 5u);
}

TEST_F(CpuCompactionExecutorTest, OutputBytesAreDeterministic) {
  Random rnd(test::TestSeed());
  SequenceNumber next_seq = 1;
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  std::vector<Entry> all;
  for (int i = 0; i < 4; i++) {
    auto file = RandomEntries(&rnd, 500, 400, &next_seq);
    p.inputs[0].insert(p.inputs[0].begin(), Write(file));
  }
  p.max_output_file_size = 8 << 10;
  const Compaction c(std::move(p), &icmp_);
  const std::vector<SequenceNumber> snapshots = {next_seq / 3, next_seq / 2};

  CompactionJobResult first, second;
  ASSERT_TRUE(RunJob(c, snapshots, &first).ok());
  std::vector<std::string> bytes;
  for (const FileMetaData& f : first.outputs) {
    std::string data;
    ASSERT_TRUE(ReadFileToString(env_, TableFileName(dbname_, f.number), &data).ok());
    bytes.push_back(data);
  }
  RemoveOutputs(first);
  ASSERT_TRUE(RunJob(c, snapshots, &second).ok());
  ASSERT_EQ(first.outputs.size(), second.outputs.size());
  ASSERT_GT(first.outputs.size(), 1u);
  for (size_t i = 0; i < second.outputs.size(); i++) {
    EXPECT_EQ(first.outputs[i].number, second.outputs[i].number);
    std::string data;
    ASSERT_TRUE(
        ReadFileToString(env_, TableFileName(dbname_, second.outputs[i].number), &data).ok());
    EXPECT_TRUE(data == bytes[i]) << "output " << i << " differs";
  }
}

TEST_F(CpuCompactionExecutorTest, CorruptInputBlockFailsAndListsEveryCreatedFile) {
  Random rnd(test::TestSeed());
  SequenceNumber next_seq = 1;
  auto entries = RandomEntries(&rnd, 3000, 3000, &next_seq);
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  p.inputs[0] = {Write(entries)};
  p.max_output_file_size = 4096;
  const Compaction c(std::move(p), &icmp_);
  // Flip a byte halfway into the data blocks: outputs exist when it is met.
  const std::string fname = TableFileName(dbname_, c.input(0, 0)->number);
  std::string data;
  ASSERT_TRUE(ReadFileToString(env_, fname, &data).ok());
  data[data.size() / 2] ^= 0x40;
  ASSERT_TRUE(WriteStringToFile(env_, data, fname, true).ok());

  CompactionJobResult result;
  Status s = RunJob(c, {}, &result);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_GT(result.outputs.size(), 0u);
  EXPECT_EQ(Listed(result), NonInputTables());
  RemoveOutputs(result);  // what the caller does: nothing is left behind
  EXPECT_TRUE(NonInputTables().empty());
}

TEST_F(CpuCompactionExecutorTest, DuplicateInternalKeysAreCorruption) {
  // Two inputs holding the same internal key cannot come from a valid tree.
  const std::vector<Entry> a = {{"a", 5, ValueType::kValue, "x"}, {"b", 6, ValueType::kValue, "y"}};
  const std::vector<Entry> b = {{"b", 6, ValueType::kValue, "y"}, {"c", 7, ValueType::kValue, "z"}};
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  p.inputs[0] = {Write(b), Write(a)};
  const Compaction c(std::move(p), &icmp_);
  CompactionJobResult result;
  Status s = RunJob(c, {}, &result);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_EQ(Listed(result), NonInputTables());
}

TEST_F(CpuCompactionExecutorTest, MissingInputIsAnError) {
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  p.inputs[0] = {MakeFile(77, "a", "b", 1000)};
  const Compaction c(std::move(p), &icmp_);
  CompactionJobResult result;
  EXPECT_FALSE(RunJob(c, {}, &result).ok());
  EXPECT_TRUE(result.outputs.empty());
}

TEST_F(CpuCompactionExecutorTest, EverythingDroppedWritesNoFile) {
  const std::vector<Entry> entries = {{"a", 9, ValueType::kDeletion, ""},
                                      {"a", 3, ValueType::kValue, "old"},
                                      {"b", 8, ValueType::kDeletion, ""}};
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  p.inputs[0] = {Write(entries)};
  const Compaction c(std::move(p), &icmp_);
  CompactionJobResult result;
  ASSERT_TRUE(RunJob(c, {}, &result).ok());
  EXPECT_TRUE(result.outputs.empty());
  EXPECT_EQ(3u, result.input_entries);
  EXPECT_EQ(3u, result.dropped_entries);
  EXPECT_EQ(0u, result.output_entries);
  EXPECT_TRUE(NonInputTables().empty());
}

class CpuCompactionExecutorFaultTest : public CpuCompactionExecutorTest {
 protected:
  // A job writing several outputs, its inputs written before faults are armed.
  std::unique_ptr<Compaction> MakeJob() {
    Random rnd(test::TestSeed());
    SequenceNumber next_seq = 1;
    Compaction::Params p;
    p.level = 0;
    p.output_level = 1;
    p.inputs[0] = {Write(RandomEntries(&rnd, 2000, 2000, &next_seq))};
    p.max_output_file_size = 4096;
    env_ = &fault_env_;
    return std::make_unique<Compaction>(std::move(p), &icmp_);
  }

  void ExpectFailureListsFiles(const Compaction& c, size_t min_outputs) {
    CompactionJobResult result;
    Status s = RunJob(c, {}, &result);
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_GE(result.outputs.size(), min_outputs);
    fault_env_.ClearFailures();
    EXPECT_EQ(Listed(result), NonInputTables());
  }
};

TEST_F(CpuCompactionExecutorFaultTest, SyncFailure) {
  auto c = MakeJob();
  fault_env_.SetFailure(FaultKind::kSync, 2, true);
  ExpectFailureListsFiles(*c, 3);
  EXPECT_EQ(1u, fault_env_.InjectedCount(FaultKind::kSync));
}

TEST_F(CpuCompactionExecutorFaultTest, WriteFailure) {
  auto c = MakeJob();
  fault_env_.SetFailure(FaultKind::kWrite, 40, false, ".sst");
  ExpectFailureListsFiles(*c, 1);
  EXPECT_GE(fault_env_.InjectedCount(FaultKind::kWrite), 1u);
}

TEST_F(CpuCompactionExecutorFaultTest, OpenFailure) {
  auto c = MakeJob();
  fault_env_.SetFailure(FaultKind::kOpenWritable, 2, true);
  ExpectFailureListsFiles(*c, 2);
}

TEST_F(CpuCompactionExecutorFaultTest, ReadFailure) {
  auto c = MakeJob();
  fault_env_.SetFailure(FaultKind::kRead, 10, false);
  CompactionJobResult result;
  Status s = RunJob(*c, {}, &result);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  fault_env_.ClearFailures();
  EXPECT_EQ(Listed(result), NonInputTables());
}

}  // namespace
}  // namespace accelkv
