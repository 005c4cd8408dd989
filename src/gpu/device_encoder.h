// Device encoding of a GPU compaction job's output tables (docs/GPU.md,
// "Encode modes"). After the device has ordered and filtered the entries:
//   plan (CPU)        (OutputPlanner, output_planner.h) walk the kept
//                     entries' plan inputs (the device's
//                     dense per-entry sizes, prefixes and split counts:
//                     plan_common.h) deciding output
//                     files (OutputSplitter over TableBuilder's size estimate)
//                     and data blocks (the prefix-sum boundary rule) exactly
//                     as TableBuilder would, each block's layout (shared
//                     prefix, widths, end-offset width: BlockLayoutTracker);
//                     gather the table properties and each table's filter
//                     key count (its filter block's size);
//   gpu_encode        the device fills the data blocks and their trailers
//                     from the key arena (keys) and the file arena (values),
//                     each table's filter block (EncodeFilter) and its tail:
//                     properties and index blocks, footer (EncodeTable,
//                     tail_common.h), in chunks of whole tables
//                     (>= chunk_bytes of table bytes each, in table order);
//                     in keys-only mode (EncodeOptions::on_host) the CPU
//                     does the same from the host arenas (EncodeOnHost,
//                     host_encoder.h: stage "encode");
//   write (CPU)       each file written from the encoded buffer, fsynced.
// The writes of a chunk's tables run on writer threads while the next
// chunk is encoded.
// The files are byte-identical to TableBuilder's (the randomized executor
// tests compare them with the CPU executor's).
//
// Errors: a failure of the device (Aborted) or of the file system comes
// back with every created file listed in result->outputs (files of chunks
// encoded before a failed chunk are written whole first); the caller
// removes them. A failure before the first chunk's encode creates none.
//
// Thread safety: one job at a time (the executor serializes).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "accelkv/status.h"
#include "compaction/compaction_executor.h"
#include "gpu/job_input.h"
#include "gpu/key_sort_device.h"

namespace accelkv {
namespace gpu {

// The writes of an EncodeOutputs call still running when it
// returned (the call deferred them: a chunked job overlaps them with the
// next chunk's work). Finish must come before the host output buffer is
// used again (the next call's before_output) and before the job ends; the
// destructor finishes writes not finished.
class PendingWrites {
 public:
  virtual ~PendingWrites() = default;
  // Joins the writer threads and adds the files (outputs in table order,
  // bytes and entries written), the write stage times and the writers' CPU
  // seconds to the result given to the call; the first failure in table
  // order, else OK. Call once.
  virtual Status Finish() = 0;
};

// The bytes of one positioned write of an output table (WritableFile::
// WriteAt): a table of more is written by several threads at once, where
// its file takes positioned writes (else it is appended whole). One thread
// copies about 10 GB/s into memory, 16 about 45 GB/s (H100 machine,
// bench/results/2026-11-27-h100-host-bandwidth.md), and a 32 MiB encode
// chunk holds only a few tables.
inline constexpr uint64_t kWritePieceBytes = 2ull << 20;

// Device-encode mode's host output buffer, when the whole output would be
// at least twice its size: a ring of this many slots of the job's largest
// encode chunk (EncodeOutputs). 4: chunk c + 1 is queued while chunk c
// lands and the writers still write chunks c - 1 and c - 2. A database's
// jobs of a GiB or more, in 64 MiB tables, pinned their whole output
// (bench/results/2026-11-27-h100-pinned-pool.md).
inline constexpr size_t kOutputRingSlots = 4;

// GpuExecutorOptions' settings of device-encode mode.
struct EncodeOptions {
  uint64_t chunk_bytes = 0;  // encode_chunk_bytes
  // Keys-only mode: the CPU encodes the planned tables from the host
  // arenas and entry arrays (EncodeOnHost, host_encoder.h), stage "encode",
  // instead of the device (stage "gpu_encode").
  bool on_host = false;
};

// Writes the output tables of the entries sorted.kept (indices into
// input's entry arrays, in output order) from the device's plan inputs
// (sorted.plan, from a Run with keep_for_encode). *job is scratch, reused
// across jobs so its block array keeps its pages. options: the data bytes
// per encode call, the block plan's replans and the encoder (EncodeOptions).
// Calls device->ReleaseEncodeInput() once the last chunk is encoded or
// failed (not when it returns before the first: the caller releases).
// before_output (may be empty) runs after the plan, before the host output
// buffer is taken (a chunked job finishes the previous chunk's writes
// there); its failure is returned. With defer not null, writes still
// running after the last chunk's encode are handed to *defer and the call
// returns OK; the files and the rest of the result come with Finish.
Status EncodeOutputs(const CompactionJobSpec& spec, const JobInput& input,
                     const KeySortOutput& sorted, KeySortDevice* device,
                     const EncodeOptions& options, EncodeJob* job,
                     const std::function<Status()>& before_output,
                     std::unique_ptr<PendingWrites>* defer, CompactionJobResult* result);

}  // namespace gpu
}  // namespace accelkv
