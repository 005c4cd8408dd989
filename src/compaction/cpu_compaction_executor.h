// CpuCompactionExecutor: the reference executor. Merges the input tables with
// a merging iterator, filters with ObsoleteVersionFilter, writes tables with
// TableBuilder split by OutputSplitter, and fsyncs each output before the
// next is opened. Its output is the reference the GPU executor must match
// byte for byte.
//
// Thread safety: Run may be called concurrently for disjoint jobs.
#pragma once

#include "compaction/compaction_executor.h"

namespace accelkv {

class CpuCompactionExecutor final : public CompactionExecutor {
 public:
  CpuCompactionExecutor() = default;
  const char* Name() const override { return "cpu"; }
  Status Run(const CompactionJobSpec& spec, CompactionJobResult* result) override;
};

}  // namespace accelkv
