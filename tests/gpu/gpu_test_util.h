// Helpers for the GPU executor tests: randomized compaction jobs written to
// an Env, and running one job on an executor while capturing its output
// files' bytes.
//
// Thread safety: one test thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compaction/compaction.h"
#include "compaction/compaction_executor.h"
#include "table/table_options.h"
#include "util/random.h"

namespace accelkv {
namespace test {

struct GpuJobShape {
  int l0_files = 4;
  int l1_files = 2;
  int entries_per_file = 300;
  uint32_t max_key_size = 64;     // user keys 1..max (a few longer, up to 1024)
  uint32_t max_value_size = 200;  // values 0..max (a few up to 64 KiB)
  bool allow_long_values = true;
};

// One randomized job: input tables written under dbname, the Compaction and
// the snapshots.
struct GpuJob {
  std::unique_ptr<Compaction> compaction;
  std::vector<SequenceNumber> snapshots;
  uint64_t input_entries = 0;
};

GpuJob MakeRandomJob(Random* rnd, Env* env, const std::string& dbname, const TableOptions& topt,
                     const InternalKeyComparator* icmp, const GpuJobShape& shape);

// Runs the job; on OK, *files gets every output's bytes (by number) and the
// output files are then removed so the next run can reuse the numbers.
Status RunAndCapture(CompactionExecutor* executor, Env* env, const std::string& dbname,
                     const TableOptions& topt, const InternalKeyComparator* icmp, const GpuJob& job,
                     CompactionJobResult* result, std::map<uint64_t, std::string>* files);

// Number of table files with number >= 1000 (outputs) under dbname.
int CountOutputFiles(Env* env, const std::string& dbname);

}  // namespace test
}  // namespace accelkv
