// Device encoding of a GPU compaction job's output tables (docs/GPU.md,
// "Encode modes"). After the device has ordered and filtered the entries:
//   plan (CPU)        walk the kept entries' plan inputs (the device's
//                     dense per-entry sizes, prefixes, hashes and split
//                     counts: plan_common.h) deciding output
//                     files (OutputSplitter over TableBuilder's size estimate)
//                     and data blocks (the prefix-sum boundary rule) exactly
//                     as TableBuilder would, each block's layout (shared
//                     prefix, widths, end-offset width: BlockLayoutTracker);
//                     gather the table properties and filter hashes;
//   gpu_encode        the device fills every data block and its trailer from
//                     the key arena (keys) and the file arena (values);
//   encode (CPU)      filter, properties and index blocks and the footer of
//                     each table (small: one index entry per data block);
//   write (CPU)       each file written from the encoded buffer, fsynced.
// The files are byte-identical to TableBuilder's (the randomized executor
// tests compare them with the CPU executor's).
//
// Errors: anything the device reports (Aborted) comes back before any file
// exists; file-system errors come back with the created files listed in
// result->outputs.
//
// Thread safety: one job at a time (the executor serializes).
#pragma once

#include <cstdint>
#include <vector>

#include "accelkv/status.h"
#include "compaction/compaction_executor.h"
#include "gpu/job_input.h"
#include "gpu/key_sort_device.h"

namespace accelkv {
namespace gpu {

// Writes the output tables of the entries sorted.kept (indices into
// input's entry arrays, in output order) from the device's plan inputs
// (sorted.plan, from a Run with keep_for_encode). *job is scratch, reused
// across jobs so its block array keeps its pages.
Status EncodeOutputsOnDevice(const CompactionJobSpec& spec, const JobInput& input,
                             const KeySortOutput& sorted, KeySortDevice* device,
                             EncodeJob* job, CompactionJobResult* result);

}  // namespace gpu
}  // namespace accelkv
