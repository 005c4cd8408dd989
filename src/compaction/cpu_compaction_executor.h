// CpuCompactionExecutor: the reference executor. Runs each key range of the
// job (Compaction::subcompaction_boundaries; one range when there are none)
// as a SubcompactionJob on up to max_threads threads, the calling thread
// being one of them (RocksDB's parallel subcompactions); each thread takes
// the next range not yet taken, in key order. The
// outputs of all ranges are listed in key order. Because OutputSplitter
// closes an output at every boundary, the files are the same, byte for
// byte and in the same order, as when the ranges run one after another,
// and they are the reference the GPU executor must match.
//
// Result of a job of K ranges: counts and bytes summed over the ranges;
// cpu_seconds sums every range's thread CPU time; stage_micros sums each
// stage's time over the ranges (thread time: with K > 1 a stage can exceed
// the job's wall time). On an error in one range the others stop early;
// the job returns the first error in key order that is not such a stop and
// lists every file any range created.
//
// Thread safety: Run may be called concurrently for disjoint jobs.
#pragma once

#include "compaction/compaction_executor.h"

namespace accelkv {

class CpuCompactionExecutor final : public CompactionExecutor {
 public:
  // max_threads: threads per job, the calling thread included; 0 (the
  // default) is one per range, 1 runs the ranges one after another on the
  // calling thread (the reference the benchmark checks against).
  explicit CpuCompactionExecutor(int max_threads = 0) : max_threads_(max_threads) {}
  const char* Name() const override { return "cpu"; }
  Status Run(const CompactionJobSpec& spec, CompactionJobResult* result) override;

 private:
  const int max_threads_;
};

}  // namespace accelkv
