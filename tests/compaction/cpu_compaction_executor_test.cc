// CpuCompactionExecutor over MemEnv with real tables: randomized jobs checked
// against an oracle of the GC rule, output splitting, determinism, corrupt
// inputs and injected write/sync/open failures.
#include "compaction/cpu_compaction_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "accelkv/comparator.h"
#include "compaction/executor_test_util.h"
#include "testutil/test_util.h"
#include "util/filename.h"

namespace accelkv {
namespace {

using test::Entry;
using test::Key;
using test::KVs;
using test::MakeFile;
using test::Oracle;
using test::RandomEntries;

using CpuCompactionExecutorTest = test::ExecutorTest;

TEST_F(CpuCompactionExecutorTest, RandomizedJobsMatchTheOracle) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  for (int round = 0; round < 24; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    test::RandomJob job = MakeRandomJob(&rnd, round);
    const Compaction& c = *job.compaction;

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

using CpuCompactionExecutorFaultTest = test::ExecutorTest;

TEST_F(CpuCompactionExecutorFaultTest, SyncFailure) {
  auto c = MakeFaultJob();
  fault_env_.SetFailure(FaultKind::kSync, 2, true);
  ExpectIOErrorListsFiles(*c, 3);
  EXPECT_EQ(1u, fault_env_.InjectedCount(FaultKind::kSync));
}

TEST_F(CpuCompactionExecutorFaultTest, WriteFailure) {
  auto c = MakeFaultJob();
  fault_env_.SetFailure(FaultKind::kWrite, 40, false, ".sst");
  ExpectIOErrorListsFiles(*c, 1);
  EXPECT_GE(fault_env_.InjectedCount(FaultKind::kWrite), 1u);
}

TEST_F(CpuCompactionExecutorFaultTest, OpenFailure) {
  auto c = MakeFaultJob();
  fault_env_.SetFailure(FaultKind::kOpenWritable, 2, true);
  ExpectIOErrorListsFiles(*c, 2);
}

TEST_F(CpuCompactionExecutorFaultTest, ReadFailure) {
  auto c = MakeFaultJob();
  fault_env_.SetFailure(FaultKind::kRead, 10, false);
  CompactionJobResult result;
  Status s = RunJob(*c, {}, &result);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  fault_env_.ClearFailures();
  EXPECT_EQ(Listed(result), NonInputTables());
}

}  // namespace
}  // namespace accelkv
