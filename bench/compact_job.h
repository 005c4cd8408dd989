// CompactJob: the input of the `compact` workload, built in memory: input
// tables written through an in-memory Env, the Compaction over them, the
// snapshot, and what a correct compaction must output (kept entries in
// order), so every executor's output can be verified entry by entry.
//
// Shape (docs/bench.md, "compact"):
//   - level 1 (older data, when l1_files > 0): the even key indices below
//     num, one version each, cut into l1_files files of equal key ranges;
//   - level 0: l0_files overlapping files, each of num / l0_files distinct
//     keys drawn uniformly from [0, num) (so keys are overwritten across
//     files and over level 1); one entry in ten is a tombstone; the newest
//     file has the highest sequence numbers;
//   - one snapshot, at the last sequence number of the middle L0 file, so
//     some overwritten versions must be kept;
//   - bottommost (nothing below level 1): tombstones in the oldest stripe
//     and the versions they hide are dropped.
// Keys are db_bench keys (the index, zero-padded to key_size); values are
// ValueFactory values for (key, sequence number).
//
// Thread safety: one thread builds a job; the built job is read-only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accelkv/env.h"
#include "compaction/compaction.h"
#include "table/table_options.h"
#include "util/internal_key.h"

namespace accelkv_bench {

struct CompactJobShape {
  uint64_t num = 1000000;  // key space; entries over all L0 files
  size_t key_size = 16;
  size_t value_size = 100;
  // > value_size: each value's size from value_size to this, drawn by a
  // hash of its key index and version (ValueSize); 0: all value_size.
  size_t value_size_max = 0;
  int l0_files = 8;
  int l1_files = 16;
  uint64_t seed = 301;
  uint64_t target_file_size = 64ull << 20;
  size_t block_size = 4096;
  int bloom_bits_per_key = 10;
  int max_subcompactions = 1;  // GenSubcompactionBoundaries' k
  bool direct_writes = false;  // outputs: TableOptions::use_direct_writes
  bool direct_reads = false;   // GPU executor's inputs: TableOptions::direct_compaction_reads

  // The value bytes of key key_index at version seq (the same when the
  // inputs are made and when the outputs are checked).
  size_t ValueSize(uint64_t key_index, uint64_t seq) const;
};

// One entry a correct compaction keeps (in output order).
struct CompactExpectedEntry {
  uint64_t key_index;
  accelkv::SequenceNumber seq;
  bool deletion;
};

class CompactJob {
 public:
  // Writes the input tables under dbname in env (which must outlive the
  // job). Errors are returned with what could not be written.
  static accelkv::Status Build(const CompactJobShape& shape, accelkv::Env* env,
                               const std::string& dbname, std::unique_ptr<CompactJob>* job);

  const CompactJobShape& shape() const { return shape_; }
  const accelkv::Compaction& compaction() const { return *compaction_; }
  const accelkv::TableOptions& table_options() const { return topt_; }
  const accelkv::InternalKeyComparator* icmp() const { return &icmp_; }
  const std::vector<accelkv::SequenceNumber>& snapshots() const { return snapshots_; }
  const std::vector<CompactExpectedEntry>& expected() const { return expected_; }
  uint64_t input_entries() const { return input_entries_; }
  size_t input_files() const;
  // The first number outputs may use (above every input's).
  uint64_t first_output_number() const { return first_output_number_; }

 private:
  explicit CompactJob(const CompactJobShape& shape);

  CompactJobShape shape_;
  accelkv::InternalKeyComparator icmp_;
  accelkv::TableOptions topt_;
  std::unique_ptr<accelkv::Compaction> compaction_;
  std::vector<accelkv::SequenceNumber> snapshots_;
  std::vector<CompactExpectedEntry> expected_;
  uint64_t input_entries_ = 0;
  uint64_t first_output_number_ = 1;
};

}  // namespace accelkv_bench
