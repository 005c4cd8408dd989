// Helpers for the CPU executor tests (cpu_compaction_executor_test.cc,
// subcompaction_test.cc): random entries, a brute-force oracle of the GC
// rule, randomized jobs, and a fixture that writes input tables to a MemEnv
// (optionally behind a FaultInjectionEnv), runs jobs and reads outputs back.
//
// Thread safety: one test thread at a time.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "accelkv/comparator.h"
#include "compaction/compaction.h"
#include "compaction/compaction_executor.h"
#include "compaction/compaction_test_util.h"
#include "env/fault_injection_env.h"
#include "util/random.h"

namespace accelkv::test {

using KVs = std::vector<std::pair<std::string, std::string>>;

// "key000042".
std::string Key(uint64_t i);

// n random versions of random keys below key_space; sequences from
// *next_seq upward; values of random length; one in five a tombstone.
std::vector<Entry> RandomEntries(Random* rnd, int n, uint64_t key_space, SequenceNumber* next_seq,
                                 size_t max_value = 100);

// Splits sorted entries into files of about `per_file` entries, never
// between versions of one user key (a level >= 1 layout).
std::vector<std::vector<Entry>> SplitIntoFiles(const std::vector<Entry>& entries, size_t per_file);

// What the GC rule keeps of `all`, by brute force: (internal key, value) in
// internal-key order.
KVs Oracle(std::vector<Entry> all, const std::vector<SequenceNumber>& snapshots,
           const std::vector<std::pair<std::string, std::string>>& deeper_ranges);

// A random job: overlapping L0 files (or disjoint level-1 files) over older
// output-level files, random snapshots, and maybe deeper files.
struct RandomJob {
  std::unique_ptr<Compaction> compaction;
  std::vector<Entry> all;
  std::vector<SequenceNumber> snapshots;
  std::vector<std::pair<std::string, std::string>> deeper_ranges;
};

class ExecutorTest : public testing::Test {
 protected:
  ExecutorTest();

  // Writes one input table; remembers its number as an input.
  FileMetaPtr Write(const std::vector<Entry>& entries);

  // Job shape by round: round % 3 == 2 is an L1 -> L2 job, else L0 -> L1;
  // even rounds are bottommost.
  RandomJob MakeRandomJob(Random* rnd, int round);

  // Runs c on `executor` (null: a default CpuCompactionExecutor); output
  // numbers from first_output upward.
  Status RunJob(const Compaction& c, const std::vector<SequenceNumber>& snapshots,
                CompactionJobResult* result, uint64_t first_output = 1000,
                CompactionExecutor* executor = nullptr);

  // A job writing several outputs (one L0 file of 2000 random entries, 4 KiB
  // outputs), its input written before env_ becomes the FaultInjectionEnv.
  std::unique_ptr<Compaction> MakeFaultJob(std::vector<std::string> boundaries = {});
  // Runs c expecting an IOError; at least min_outputs files listed, and
  // exactly the files created.
  void ExpectIOErrorListsFiles(const Compaction& c, size_t min_outputs);

  // Every entry of the outputs, in order; checks each file's metadata.
  KVs ReadOutputs(const CompactionJobResult& result);
  // The bytes of each output, in result order.
  std::vector<std::string> OutputBytes(const CompactionJobResult& result);

  // Table files in the directory that are not inputs.
  std::set<uint64_t> NonInputTables();
  static std::set<uint64_t> Listed(const CompactionJobResult& r);
  void RemoveOutputs(const CompactionJobResult& r);

  InternalKeyComparator icmp_{BytewiseComparator()};
  std::unique_ptr<Env> mem_env_;
  FaultInjectionEnv fault_env_;
  Env* env_;
  TableOptions topt_;
  const std::string dbname_ = "/db";
  uint64_t next_input_ = 1;
  std::set<uint64_t> input_numbers_;
};

}  // namespace accelkv::test
