#include "compaction/executor_test_util.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "compaction/cpu_compaction_executor.h"
#include "table/table_cache.h"
#include "testutil/test_util.h"
#include "util/filename.h"

namespace accelkv::test {

std::string Key(uint64_t i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%06llu", static_cast<unsigned long long>(i));
  return buf;
}

std::vector<Entry> RandomEntries(Random* rnd, int n, uint64_t key_space, SequenceNumber* next_seq,
                                 size_t max_value) {
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

ExecutorTest::ExecutorTest() : mem_env_(NewMemEnv(Env::Default())), fault_env_(mem_env_.get()) {
  env_ = mem_env_.get();
  topt_.comparator = &icmp_;
  topt_.user_comparator = BytewiseComparator();
  topt_.block_size = 512;
  EXPECT_TRUE(mem_env_->CreateDir(dbname_).ok());
}

FileMetaPtr ExecutorTest::Write(const std::vector<Entry>& entries) {
  Status s;
  FileMetaPtr f = WriteTable(env_, dbname_, topt_, next_input_++, entries, &s);
  EXPECT_TRUE(s.ok()) << s.ToString();
  input_numbers_.insert(f->number);
  return f;
}

RandomJob ExecutorTest::MakeRandomJob(Random* rnd, int round) {
  const int level = round % 3 == 2 ? 1 : 0;
  const bool bottommost = round % 2 == 0;
  const uint64_t key_space = 50 + rnd->Uniform(400);
  SequenceNumber next_seq = 1;
  RandomJob job;
  Compaction::Params p;
  p.level = level;
  p.output_level = level + 1;
  // Output level first (older data).
  const int out_entries = static_cast<int>(rnd->Uniform(600));
  for (const auto& file :
       SplitIntoFiles(RandomEntries(rnd, out_entries, key_space, &next_seq), 150)) {
    p.inputs[1].push_back(Write(file));
    job.all.insert(job.all.end(), file.begin(), file.end());
  }
  if (level == 0) {
    const int n = 1 + static_cast<int>(rnd->Uniform(5));
    for (int i = 0; i < n; i++) {
      auto file = RandomEntries(rnd, 1 + static_cast<int>(rnd->Uniform(400)), key_space, &next_seq);
      p.inputs[0].insert(p.inputs[0].begin(), Write(file));  // newest first
      job.all.insert(job.all.end(), file.begin(), file.end());
    }
  } else {
    auto entries =
        RandomEntries(rnd, 1 + static_cast<int>(rnd->Uniform(800)), key_space, &next_seq);
    for (const auto& file : SplitIntoFiles(entries, 1 + rnd->Uniform(200))) {
      p.inputs[0].push_back(Write(file));
    }
    job.all.insert(job.all.end(), entries.begin(), entries.end());
  }
  if (!bottommost) {
    LevelFiles deeper;
    for (uint64_t k = rnd->Uniform(20); k < key_space; k += 10 + rnd->Uniform(40)) {
      const uint64_t hi = k + rnd->Uniform(10);
      job.deeper_ranges.emplace_back(Key(k), Key(hi));
      deeper.push_back(MakeFile(900 + k, Key(k), Key(hi), 1000));
    }
    p.deeper_levels = {{}, deeper};
  }
  std::set<SequenceNumber> snaps;
  for (int i = static_cast<int>(rnd->Uniform(4)); i > 0; i--)
    snaps.insert(1 + rnd->Uniform(next_seq));
  job.snapshots.assign(snaps.begin(), snaps.end());
  p.max_output_file_size = rnd->OneIn(2) ? (8u << 10) : (1u << 20);
  job.compaction = std::make_unique<Compaction>(std::move(p), &icmp_);
  return job;
}

std::unique_ptr<Compaction> ExecutorTest::MakeFaultJob(std::vector<std::string> boundaries) {
  Random rnd(TestSeed());
  SequenceNumber next_seq = 1;
  Compaction::Params p;
  p.level = 0;
  p.output_level = 1;
  p.inputs[0] = {Write(RandomEntries(&rnd, 2000, 2000, &next_seq))};
  p.max_output_file_size = 4096;
  p.subcompaction_boundaries = std::move(boundaries);
  env_ = &fault_env_;
  return std::make_unique<Compaction>(std::move(p), &icmp_);
}

void ExecutorTest::ExpectIOErrorListsFiles(const Compaction& c, size_t min_outputs) {
  CompactionJobResult result;
  Status s = RunJob(c, {}, &result);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_GE(result.outputs.size(), min_outputs);
  fault_env_.ClearFailures();
  EXPECT_EQ(Listed(result), NonInputTables());
}

Status ExecutorTest::RunJob(const Compaction& c, const std::vector<SequenceNumber>& snapshots,
                            CompactionJobResult* result, uint64_t first_output,
                            CompactionExecutor* executor) {
  TableCache cache(dbname_, env_, topt_, 100);
  uint64_t next = first_output;
  std::mutex mu;  // executors allocate numbers from several threads
  CompactionJobSpec spec;
  spec.dbname = dbname_;
  spec.env = env_;
  spec.table_options = topt_;
  spec.table_cache = &cache;
  spec.compaction = &c;
  spec.snapshots = snapshots;
  spec.internal_comparator = &icmp_;
  spec.new_file_number = [&next, &mu] {
    std::lock_guard<std::mutex> l(mu);
    return next++;
  };
  CpuCompactionExecutor cpu;
  if (executor == nullptr) {
    EXPECT_STREQ("cpu", cpu.Name());
    executor = &cpu;
  }
  return executor->Run(spec, result);
}

KVs ExecutorTest::ReadOutputs(const CompactionJobResult& result) {
  KVs all;
  for (const FileMetaData& f : result.outputs) {
    KVs entries;
    Status s = ReadTable(env_, dbname_, topt_, f.number, &entries);
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

std::set<uint64_t> ExecutorTest::NonInputTables() {
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

std::set<uint64_t> ExecutorTest::Listed(const CompactionJobResult& r) {
  std::set<uint64_t> out;
  for (const FileMetaData& f : r.outputs) out.insert(f.number);
  return out;
}

void ExecutorTest::RemoveOutputs(const CompactionJobResult& r) {
  for (const FileMetaData& f : r.outputs) {
    EXPECT_TRUE(env_->RemoveFile(TableFileName(dbname_, f.number)).ok());
  }
}

std::vector<std::string> ExecutorTest::OutputBytes(const CompactionJobResult& result) {
  std::vector<std::string> out;
  for (const FileMetaData& f : result.outputs) {
    std::string data;
    EXPECT_TRUE(ReadFileToString(env_, TableFileName(dbname_, f.number), &data).ok());
    out.push_back(std::move(data));
  }
  return out;
}

}  // namespace accelkv::test
