// AssembleOutputs: the CPU back end of the keys-only pipeline. Walks the
// kept entries in the order the device returned, reading keys from the key
// arena and values in place from the file arena, and makes exactly the
// TableBuilder and OutputSplitter calls the CPU executor makes, so output
// files are byte-identical to its. Each output is encoded into memory ("encode"),
// then written, fsynced and closed ("write"); a file is listed in
// result->outputs as soon as it is created, so on error the caller can
// remove it.
//
// Thread safety: one job at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "accelkv/status.h"
#include "compaction/compaction_executor.h"
#include "gpu/job_input.h"

namespace accelkv {
namespace gpu {

Status AssembleOutputs(const CompactionJobSpec& spec, const JobInput& input,
                       const HostVector<uint32_t>& kept, CompactionJobResult* result);

}  // namespace gpu
}  // namespace accelkv
