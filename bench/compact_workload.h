// The `compact` workload: one compaction job (CompactJob), built in memory
// or, with --compact-dir, on the file system, run by each requested executor
// on the same Env, timed, and verified: the single-threaded CPU executor's
// output (same subcompaction boundaries) is checked entry by entry against
// the job's expected entries, and every executor's output files must equal
// it byte for byte. On the file system the inputs are dropped from the page
// cache before each run (best effort, reported), so the timed run reads them
// from the disk and fsyncs its outputs to it.
//
// Thread safety: one thread runs the workload (executors start their own).
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "flags.h"

namespace accelkv_bench {

struct CompactResult {
  std::string executor;        // "cpu", "gpu"
  bool direct_writes = false;  // outputs written with direct I/O (--compact-direct-writes)
  bool direct_reads = false;   // GPU executor: inputs read with direct I/O (--compact-direct-reads)
  std::string device;          // "cpu", the GPU's name, "host-reference" (not a GPU)
  std::string skipped;         // why the executor did not run ("" when it ran)
  std::string env = "mem";     // "mem", "mem-pinned" or "disk:<--compact-dir>"
  std::string fs_type;         // disk: the file system's type (statfs), e.g. "ext4"
  // disk: whether the inputs' page cache was dropped before the timed run
  // (every fadvise succeeded and mincore found no input page resident), and
  // the input bytes mincore still found resident.
  bool cache_dropped = false;
  uint64_t input_cached_bytes = 0;
  int threads = 0;  // cpu: threads; gpu: 1 calling thread
  int subcompactions = 0;
  uint64_t num = 0;
  uint64_t key_size = 0;
  uint64_t value_size = 0;
  uint64_t value_size_max = 0;  // --compact-value-size-max (0: every value value_size)
  uint64_t seed = 0;
  uint64_t input_files = 0;
  uint64_t input_bytes = 0;
  uint64_t input_entries = 0;
  uint64_t output_files = 0;
  uint64_t output_bytes = 0;
  uint64_t output_entries = 0;
  uint64_t dropped_entries = 0;
  double seconds = 0;            // wall time of the executor's Run
  double input_gb_per_sec = 0;   // input bytes / 1e9 / seconds
  double output_gb_per_sec = 0;  // output bytes / 1e9 / seconds
  double cpu_sec = 0;            // process CPU (all threads) over the Run
  double executor_cpu_sec = 0;   // what the executor reports (its threads)
  uint64_t device_busy_us = 0;   // the accelerator's time (GPU executor)
  // GPU executor: the chunks the measured run took (0: run whole; a job
  // above the device budget, e.g. with ACCELKV_GPU_MEMORY_LIMIT, runs in
  // chunks: docs/GPU.md).
  uint64_t gpu_chunks = 0;
  double cpu_sec_per_gb = 0;                 // cpu_sec per 1e9 input bytes
  std::map<std::string, uint64_t> stage_us;  // the executor's stage_micros
  std::map<std::string, double> stage_cpu;   // its stage_cpu_seconds
  bool verified = false;                     // output identical to the verified reference
  std::string error;
};

std::string CompactResultToJson(const CompactResult& r);
std::string FormatCompactTable(const std::vector<CompactResult>& results);

// Runs the workload for flags; results go to *results as each executor
// finishes (and to json, one line each, when not null). Returns the exit
// status: 0 all ran and verified, 1 an error, 2 a wrong output.
int RunCompactWorkload(const BenchFlags& flags, std::ostream& human, std::ostream* json,
                       std::vector<CompactResult>* results);

}  // namespace accelkv_bench
