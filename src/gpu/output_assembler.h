// AssembleOutputs: the CPU back end of the keys-only pipeline. Walks the
// kept entries in the order the device returned, reading keys from the key
// arena and values in place from the file arena, and makes exactly the
// TableBuilder and OutputSplitter calls the CPU executor makes, so output
// files are byte-identical to its.
//   encode  the job's subcompaction ranges (their starts found by binary
//           search over the kept keys) on separate threads (ComputeThreads),
//           each range's tables into its own host buffer;
//   write   file numbers taken in key order (as the device-encode mode and
//           the one-thread CPU executor take them), each file written,
//           fsynced and closed on up to FileThreads threads.
// A file is listed in result->outputs (in key order) once it is created, so
// on error the caller can remove it; an encode failure (the first in range
// order) creates no file. The helper threads' CPU seconds are added to
// *helper_cpu_seconds.
//
// Thread safety: one job at a time (the buffers are the job's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "accelkv/status.h"
#include "compaction/compaction_executor.h"
#include "gpu/job_input.h"

namespace accelkv {
namespace gpu {

// The keys-only encode's host buffers, one per subcompaction range, reused
// across jobs so their pages stay mapped (as the device's pinned buffers).
struct AssembleBuffers {
  std::vector<std::string> ranges;
};

Status AssembleOutputs(const CompactionJobSpec& spec, const JobInput& input,
                       const HostVector<uint32_t>& kept, AssembleBuffers* buffers,
                       double* helper_cpu_seconds, CompactionJobResult* result);

}  // namespace gpu
}  // namespace accelkv
