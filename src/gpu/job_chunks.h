// Jobs larger than the device's memory budget (docs/GPU.md, "Chunked
// jobs"): such a job runs on the GPU as consecutive chunks of its
// subcompaction ranges, each chunk reading only the data blocks of every
// input table that can hold its keys, so that each fits the budget.
//
// The boundaries are part of the job (Compaction::Params), never chosen by
// the executor alone: OutputSplitter closes an output at each of them, so
// the output bytes stay a pure function of the job and equal the CPU
// executor's for the same job. The database asks ChunkBoundaries for them
// before it runs a job that does not fit (db_impl_background.cc), and the
// CPU fallback runs the same job.
//
// Thread safety: pure functions over their arguments; ReadTableIndexes
// reads files on helper threads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "accelkv/status.h"
#include "compaction/compaction_executor.h"
#include "gpu/job_input.h"
#include "table/format.h"

namespace accelkv {
namespace gpu {

// An input table's data blocks, from its footer and index block (CRC
// checked): each block's handle and the user key of its last key (the
// index key), ascending.
struct TableIndex {
  uint64_t number = 0;
  uint64_t num_entries = 0;  // from the file's metadata
  std::string smallest_user_key;
  std::vector<BlockHandle> blocks;
  std::vector<std::string> last_user_keys;
};

// The indexes of every input file of spec.compaction (level inputs, then
// output-level inputs), read on up to FileThreads threads. Corruption for a
// malformed footer or index block (with the table file), or the read's
// error. Adds the helper threads' CPU seconds to *helper_cpu_seconds.
Status ReadTableIndexes(const CompactionJobSpec& spec, std::vector<TableIndex>* indexes,
                        double* helper_cpu_seconds);

// Hints the file system to start reading the chunk's parts
// (RandomAccessFile::Prefetch), so that a chunk's reads from disk overlap
// the work on the chunk before it. Errors are ignored: a hint. Nothing with
// TableOptions::direct_compaction_reads (the chunk's O_DIRECT reads would
// not use the page cache a hint fills).
struct JobChunk;
void PrefetchChunk(const CompactionJobSpec& spec, const JobChunk& chunk);

// One chunk: a run of consecutive subcompaction ranges as one key range,
// and the part of each input table that can hold its keys.
struct JobChunk {
  UserKeyRange range;
  std::vector<TablePart> parts;  // input order; tables with no block in range left out
  uint64_t bytes = 0;            // the parts' sizes
  // The file arena the chunk's read needs (ReadInputTables): bytes, plus
  // with direct reads each part's padding to its 4 KiB-aligned cover
  // (ArenaSpanBytes).
  uint64_t arena_bytes = 0;
  uint64_t entries = 0;  // estimated: each table's entries pro rata of its blocks' bytes
  uint64_t blocks = 0;
};

// Whether a chunk whose read needs that many file-arena bytes
// (JobChunk::arena_bytes: its parts' bytes, plus direct reads' alignment
// padding), with that many estimated entries and data blocks, fits the
// device (KeySortDevice::BytesNeeded against the budget).
using ChunkFits = std::function<bool(uint64_t bytes, uint64_t entries, uint64_t blocks)>;

// Groups the ranges that the boundaries (ascending user keys) cut the job
// into: each chunk takes as many consecutive ranges as fit, in key order.
// direct_reads: the chunks are read with TableOptions::
// direct_compaction_reads (their arena_bytes, which fits is asked about,
// count the alignment padding). NotSupported when a single range does not
// fit (not a device failure: the caller runs the job on the CPU).
Status PlanJobChunks(const std::vector<TableIndex>& indexes,
                     const std::vector<std::string>& boundaries, bool direct_reads,
                     const ChunkFits& fits, std::vector<JobChunk>* chunks);

// Boundaries that cut the job into ranges that each fit: the existing ones
// (ascending, kept) plus, between them, greedy cuts at the input blocks'
// last user keys, each range as long as fits() holds for it (estimated as
// PlanJobChunks does, with the blocks at its edges); ascending and
// distinct. A range that cannot be cut smaller (one user key with more
// bytes) is left as it is: PlanJobChunks then refuses it. direct_reads as
// for PlanJobChunks.
std::vector<std::string> ChunkBoundaries(const std::vector<TableIndex>& indexes,
                                         const std::vector<std::string>& existing,
                                         bool direct_reads, const ChunkFits& fits);

}  // namespace gpu
}  // namespace accelkv
