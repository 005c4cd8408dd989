// CompactionExecutor: runs one compaction job. The seam between picking
// (CompactionPicker) and doing: DBImpl builds a CompactionJobSpec, an
// executor (the CPU one here; a GPU one in src/gpu/) turns it into synced
// output tables, and DBImpl installs them with a VersionEdit.
//
// Contract for every executor:
// - Output bytes are a pure function of the job's input files, snapshot
//   list, table options and the Compaction (its split rules): two executors
//   given the same spec produce byte-identical files under the same numbers
//   when new_file_number yields the same numbers.
// - The job stages are: read inputs -> merge into internal-key order -> drop
//   obsolete versions (ObsoleteVersionFilter) -> encode tables split by
//   OutputSplitter -> write + fsync. Stage times go to stage_micros under
//   the names "read", "merge", "drop", "encode", "write" (an executor may
//   add its own, e.g. "copy_in").
// - The executor never touches the DB, its mutex or its versions. On error it
//   returns the Status and lists in result->outputs every file it created, so
//   the caller can remove them; nothing is installed.
//
// Thread safety: Run may be called concurrently for disjoint jobs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "accelkv/env.h"
#include "accelkv/status.h"
#include "compaction/compaction.h"
#include "table/table_cache.h"
#include "table/table_options.h"
#include "util/internal_key.h"
#include "version/file_meta.h"

namespace accelkv {

struct CompactionJobSpec {
  std::string dbname;
  Env* env = nullptr;
  TableOptions table_options;
  // Opens the input tables (their blocks are read with fill_cache = false).
  TableCache* table_cache = nullptr;
  const Compaction* compaction = nullptr;
  // Live snapshot sequences, ascending and distinct.
  std::vector<SequenceNumber> snapshots;
  const InternalKeyComparator* internal_comparator = nullptr;
  // Allocates the number of the next output file; safe to call from the
  // executor's threads.
  std::function<uint64_t()> new_file_number;
};

struct CompactionJobResult {
  // Output tables in key order, synced and closed (on error: the files
  // created so far, for removal).
  std::vector<FileMetaData> outputs;
  uint64_t input_entries = 0;
  uint64_t output_entries = 0;
  uint64_t dropped_entries = 0;  // shadowed versions and dropped tombstones
  uint64_t bytes_read = 0;       // input file bytes
  uint64_t bytes_written = 0;    // output file bytes
  // CPU time (user + system) the job's threads spent.
  double cpu_seconds = 0;
  // Wall time per stage, microseconds (see the stage names above).
  std::map<std::string, uint64_t> stage_micros;
  // CPU seconds by stage, where an executor measures them (the GPU
  // executor: its job thread's and its helper threads', docs/GPU.md
  // "Stats"); they sum to cpu_seconds. Empty when not measured.
  std::map<std::string, double> stage_cpu_seconds;
  // Time an accelerator worked on the job (the GPU executor: its device
  // stages' times), microseconds; 0 for the CPU executor.
  uint64_t device_busy_micros = 0;
};

// Adds each stage's value in `from` to the same stage's in `to` (the
// per-stage maps of CompactionJobResult and of executor stats).
template <typename Value>
inline void AddStages(const std::map<std::string, Value>& from, std::map<std::string, Value>* to) {
  for (const auto& [stage, value] : from) (*to)[stage] += value;
}

// Adds the result of one part of a job (a subcompaction range, a chunk) to
// the job's: outputs appended, counts, bytes, CPU and device time and stage
// times summed.
inline void AccumulateJobResult(const CompactionJobResult& part, CompactionJobResult* job) {
  job->outputs.insert(job->outputs.end(), part.outputs.begin(), part.outputs.end());
  job->input_entries += part.input_entries;
  job->output_entries += part.output_entries;
  job->dropped_entries += part.dropped_entries;
  job->bytes_read += part.bytes_read;
  job->bytes_written += part.bytes_written;
  job->cpu_seconds += part.cpu_seconds;
  AddStages(part.stage_micros, &job->stage_micros);
  AddStages(part.stage_cpu_seconds, &job->stage_cpu_seconds);
  job->device_busy_micros += part.device_busy_micros;
}

class CompactionExecutor {
 public:
  virtual ~CompactionExecutor() = default;
  // "cpu", "gpu": the key of the executor's stats.
  virtual const char* Name() const = 0;
  virtual Status Run(const CompactionJobSpec& spec, CompactionJobResult* result) = 0;
};

}  // namespace accelkv
