// Helpers for the GPU executor tests: randomized compaction jobs written to
// an Env, and running one job on an executor while capturing its output
// files' bytes.
//
// Thread safety: one test thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compaction/compaction.h"
#include "compaction/compaction_executor.h"
#include "table/block_builder.h"
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
  // True: every second value (at random) is at most 100 bytes instead, so
  // blocks also hold small entries before a large one.
  bool mix_small_values = false;
  // > 0: every user key has exactly this many bytes (blocks with a fixed
  // key width; no keys that are prefixes of others).
  uint32_t fixed_key_size = 0;
  // With fixed_key_size: the user keys are distinct zero-padded decimal
  // numbers below decimal_key_range (db_bench's keys), so most of their
  // bits are the same in every key (the CUDA device's packed radix keys).
  uint32_t decimal_key_range = 0;
  // >= 0: every value has exactly this many bytes (tombstones' are empty),
  // no long values.
  int fixed_value_size = -1;
};

// Counts of data-block layouts (docs/FORMAT.md, "Block") in table files, to
// check that randomized tests reach every case of the format.
struct BlockShapes {
  uint64_t blocks = 0;
  uint64_t no_prefix = 0;      // P == 0
  uint64_t prefix = 0;         // P > 0, n >= 2
  uint64_t one_entry = 0;      // n == 1
  uint64_t fixed_keys = 0;     // n >= 2, fixed key width
  uint64_t variable_keys = 0;  // key_ends present
  uint64_t fixed_values = 0;   // n >= 2, fixed value width
  uint64_t variable_values = 0;
  uint64_t wide_ends = 0;  // 4-byte end offsets (block over 64 KiB with an array)
  uint64_t huge = 0;       // 1 MiB or more (CUDA: several thread blocks encode each)
  uint64_t huge_many = 0;  // ...with n >= 2
};

// Calls fn(offset, layout) for each data block of one table file's bytes, in
// file order (offset: the block's first byte in the file).
Status ForEachDataBlock(const std::string& file,
                        const std::function<void(uint64_t, const BlockLayout&)>& fn);

// Adds the layouts of the data blocks of one table file's bytes to *shapes.
Status CountBlockShapes(const std::string& file, BlockShapes* shapes);

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
