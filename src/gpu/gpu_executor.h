// GpuCompactionExecutor: runs a compaction job with the GPU doing the
// data-parallel middle (docs/GPU.md):
//   read (CPU: input files whole into one pinned file arena; each file is
//      staged to the device and its footer, index and block layouts
//      validated as soon as it is read)
//   -> decode (CPU: the key arena's layout; GPU: every entry's internal key
//      materialized (block prefix ++ suffix) into the key arena, its value
//      located in the file arena; all bounds-checked)
//   -> verify (GPU: CRC32C of every data, filter and properties block),
//      sort (GPU: internal-key order, CUB merge sort over 8-byte key
//      prefixes with full-key tie-breaks), dedup (GPU:
//      ObsoleteVersionFilter's rule per entry and predecessor, CUB select),
//      copy_out (kept order)
//   -> plan (GPU: plan inputs per kept entry and the data blocks' records;
//      CPU: the plan over them, tables and blocks as TableBuilder and
//      OutputSplitter cut them: output_planner.h, range_planner.h)
//   -> encode: device-encode mode (GPU: whole tables: data blocks, filter,
//      properties and index blocks, footer: device_encoder.h,
//      tail_common.h) or keys-only mode (CPU: the same functions, keys from
//      the key arena, values in place from the file arena, blocks on
//      several threads: host_encoder.h)
//   -> write (CPU: each output written, fsynced, closed, chunk by chunk
//      while the next chunk is encoded).
// Output files are byte-identical to the CPU executor's in both modes.
// A job too large for the device's memory budget runs in chunks: groups of
// its subcompaction ranges, each reading only the input blocks that can
// hold its keys (job_chunks.h); ChunkBoundaries gives such a job the
// boundaries to run with (the caller puts them into the job, so the CPU
// executor cuts its output at the same keys).
//
// Usable with and without CUDA: Create() returns nullptr plus a one-line
// reason when there is no usable GPU (or no CUDA in the build).
//
// Failures: every device error, out-of-memory or injected failure returns
// Status::Aborted("gpu: <stage>: ..."), so the caller can rerun the job on
// the CPU executor. Failures before the encode create no file; a failed
// device encode of a later chunk (device-encode mode writes chunk by chunk)
// may follow written files, which are all listed in result->outputs for the
// caller to remove, as for file-system errors. A checksum mismatch returns
// Corruption (before any file exists; not a GPU failure).
// max_consecutive_failures Aborted jobs in a row mark the GPU unhealthy for
// unhealthy_micros: ShouldOffload() is false meanwhile.
//
// Thread safety: Run, ShouldOffload, healthy and GetStats may be called
// concurrently; jobs on one executor run one at a time on the device.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accelkv/options.h"
#include "compaction/compaction_executor.h"

namespace accelkv {

namespace gpu {
class DeviceMemoryLedger;
class KeySortDevice;
struct EncodeJob;
struct JobChunk;
struct JobInput;
class PendingWrites;
struct KeySortOutput;
}  // namespace gpu

struct GpuExecutorOptions {
  // Jobs with fewer input bytes run on the CPU. 4 MiB: the crossover
  // measured on an H100 against the one-thread CPU executor (scripts/
  // gpu_all.sh part crossover; docs/GPU.md, "Decision policy").
  uint64_t min_input_bytes = 4ull << 20;
  // Encode mode: jobs whose input files hold at most this many bytes per
  // entry (their metadata: about the average value for large values) have
  // their output tables built on the device (device-encode mode); larger
  // ones keep their values on the host (keys-only mode: only each block's
  // keys and end offsets cross PCIe, with the values under 64 KiB between
  // them (ForEachKeyRun); the CPU checks the checksums, the
  // device decodes, sorts and plans, and the CPU encodes the planned
  // tables from the host's file arena; the device holds no output buffer).
  // The environment variable ACCELKV_GPU_ENCODE=device|cpu forces a mode
  // (measurements). 16 MiB: since output blocks of 16 KiB or more are
  // encoded by a thread block each, device encode was faster than keys-only
  // at every size measured on an H100, 5-6x from 4 KiB to 1 MiB, 3.6x at
  // 4 MiB and 3.1x at 16 MiB, the largest (docs/GPU.md, "Encode modes";
  // bench/results/2026-11-26-h100-encode-large-blocks.md). Above it, where
  // nothing was measured, keys-only mode keeps values off the device's
  // output buffer.
  uint64_t device_encode_max_avg_value = 16ull << 20;
  // Device-encode mode encodes the output tables in chunks of whole tables
  // of at least this many data bytes, in table order, and writes each
  // chunk's files while the device encodes the next (docs/GPU.md). 32 MiB:
  // a few chunks per job of a few hundred MB, each large enough that a
  // device call's fixed cost (a launch, a synchronize) is small beside it.
  uint64_t encode_chunk_bytes = 32ull << 20;
  // Device-encode mode: the device cuts each subcompaction range's data
  // blocks (docs/GPU.md, "Block plan"), and when the job's output tables
  // may hold at least this many bytes (Compaction::max_output_file_size)
  // it also splits each range into its output tables by the CPU's rule
  // and cuts every table's blocks from its first entry ("Table splits");
  // with smaller tables each range is cut as one table and the CPU plans
  // its later tables entry by entry. 4 MiB: a table of about 30,000
  // entries at 128-byte values, whose entry-by-entry plan takes a few
  // times a split round on the device (two short waits).
  uint64_t device_split_min_bytes = 4ull << 20;
  // The device searches a table after a range's first for its end in a
  // window of about twice the range's previous table's entries, at least
  // this many (KeySortInput::split_window). 65,536: a few MB of entries,
  // small beside a database's 64 MiB tables.
  uint64_t device_split_window = 64 << 10;
  // Key-first jobs (docs/GPU.md, "Key-first jobs"): a device-encode job
  // run whole, whose device memory leaves room for a second file arena
  // (the keys' view), checks, decodes, sorts and plans its keys while its
  // tables are still being copied to the device (the device reads the
  // blocks' keys in place from page-locked host memory); the verify and
  // the encode wait for the copies. ACCELKV_GPU_KEY_FIRST=0|1 overrides
  // this (measurements).
  bool key_first = true;
  // ...for jobs whose input files hold at least this many bytes per entry
  // (their metadata, as for the encode mode): with small values the keys
  // are a large share of the bytes, and reading them in place competes
  // with the copies. 256: on an H200, key-first jobs ran 0.97x as fast
  // at 32-byte values, 0.94x at 128, 1.09x at 256, 1.17x at 512 and
  // 1.20-1.27x at 1 KiB and 4 KiB (docs/GPU.md, "Key-first jobs";
  // bench/results/2026-11-28-h200-key-first.md).
  uint64_t key_first_min_bytes_per_entry = 256;
  // A key-first job whose tables an in-memory Env lends is staged in this
  // many groups, the tables' low keys first, so that the encode of the
  // output's first tables starts, and their copies back run, while the
  // later groups are still copied in (docs/GPU.md, "Staging groups");
  // 1: table by table. ACCELKV_GPU_STAGE_GROUPS=N overrides it
  // (measurements). At most 255. On an H100 (24 tables, 231 MB), against
  // the code before staging groups: 4 groups 1.15x at 4 KiB values and
  // 1.11x at 1 KiB, 8 groups 1.06x at both, 16 groups 1.0x-1.02x (more
  // and smaller copies to queue; bench/results/2026-11-28-h100-staging-groups.md).
  uint32_t key_first_stage_groups = 4;
  // Fraction of the device's free memory (at Create) one job may use.
  double device_memory_fraction = 0.5;
  // When not 0, the most device bytes one job may use (below the
  // fraction's); larger jobs run in chunks (tests and measurements of
  // chunked jobs; ACCELKV_GPU_MEMORY_LIMIT in a database).
  uint64_t device_memory_limit = 0;
  // Consecutive Aborted jobs that mark the GPU unhealthy, and for how long.
  int max_consecutive_failures = 3;
  uint64_t unhealthy_micros = 60ull * 1000 * 1000;
};

// Where an injected failure strikes (tests; SetInjectedFailure).
enum class GpuStage { kNone, kAlloc, kCopyIn, kVerify, kSort, kDedup, kCopyOut, kEncode };
const char* GpuStageName(GpuStage stage);

struct GpuExecutorStats {
  uint64_t jobs = 0;          // Run calls that completed OK
  uint64_t chunked_jobs = 0;  // of them, run in chunks (too large to run whole)
  uint64_t chunks = 0;        // the chunks of those jobs
  uint64_t failures = 0;      // Run calls that returned Aborted (caller falls back)
  uint64_t corruptions = 0;   // Run calls that returned Corruption
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
  double cpu_seconds = 0;
  uint64_t device_busy_micros = 0;                  // the device stages' time, OK jobs
  std::map<std::string, uint64_t> stage_micros;     // summed over OK jobs
  std::map<std::string, double> stage_cpu_seconds;  // summed over OK jobs
  // Pinned host memory of every GPU executor of the process (their shared
  // pool, pinned_pool.h): mapped now and at most; 0 on the host device.
  uint64_t pinned_host_bytes = 0;
  uint64_t peak_pinned_host_bytes = 0;
  // Regions the pool mapped (pinned) so far, and their bytes in all: a
  // pool that keeps remapping shows here, since pinning costs CPU time by
  // the byte.
  uint64_t pinned_host_maps = 0;
  uint64_t pinned_host_mapped_bytes = 0;
};

class GpuCompactionExecutor final : public CompactionExecutor {
 public:
  // The executor on the first CUDA device; nullptr and *reason (one line,
  // e.g. "no GPU: cudaGetDeviceCount: no CUDA-capable device is detected")
  // when there is none or the build has no CUDA.
  static std::unique_ptr<GpuCompactionExecutor> Create(const GpuExecutorOptions& options,
                                                       std::string* reason);
  // Over an explicit device (tests: the host reference device). Jobs
  // reserve their estimated device bytes on ledger before they start, and
  // run on the CPU (NotSupported) when the other jobs on it leave too
  // little; without one, on the process's ledger for the device when the
  // device is shared (KeySortDevice::SharedMemoryCapacity), else on none.
  GpuCompactionExecutor(const GpuExecutorOptions& options,
                        std::unique_ptr<gpu::KeySortDevice> device,
                        std::shared_ptr<gpu::DeviceMemoryLedger> ledger = nullptr);
  ~GpuCompactionExecutor() override;

  const char* Name() const override { return "gpu"; }
  // Runs the job (see the header comment for the error contract). Jobs the
  // executor cannot take (a non-bytewise comparator, over 2^32 entries)
  // return Aborted too, with nothing created.
  Status Run(const CompactionJobSpec& spec, CompactionJobResult* result) override;

  // The decision policy: the GPU is healthy, the user comparator is
  // bytewise, the job's input bytes >= min_input_bytes, and its estimated
  // device memory fits the budget, or it has subcompaction boundaries to
  // run in chunks at (Run then groups its ranges into chunks that fit).
  bool ShouldOffload(const CompactionJobSpec& spec) const;
  // Whether the job passes the policy but for its size: it fits the budget
  // only in chunks, and needs ChunkBoundaries first.
  bool NeedsChunkBoundaries(const CompactionJobSpec& spec) const;
  // Subcompaction boundaries for running the job in chunks that fit the
  // budget: the job's own plus user keys from its input tables' indexes
  // (read here: footers and index blocks), cutting ranges that each need
  // at most half the budget (job_chunks.h). The caller runs the job
  // with them on either executor (docs/GPU.md, "Chunked jobs"). The read's
  // error or Corruption when an index cannot be read.
  Status ChunkBoundaries(const CompactionJobSpec& spec, std::vector<std::string>* boundaries);
  bool healthy() const;
  GpuExecutorStats GetStats() const;
  // The device's name ("host-reference", "cuda:0 NVIDIA H100 ...") and the
  // device bytes one job may use.
  const char* DeviceName() const;
  uint64_t MemoryBudget() const;

  // Test hook: every later job fails at `stage` with Aborted until it is
  // reset to GpuStage::kNone. Process-wide; also read from the environment
  // variable ACCELKV_GPU_FAIL_STAGE ("alloc", "copy_in", ...) at first use.
  static void SetInjectedFailure(GpuStage stage);

 private:
  // whole_bytes: WholeJobBytes(spec), computed once by Run.
  Status RunLocked(const CompactionJobSpec& spec, uint64_t whole_bytes,
                   CompactionJobResult* result);
  // The job in chunks (its boundaries' ranges grouped to fit the budget).
  Status RunChunked(const CompactionJobSpec& spec, CompactionJobResult* result);
  // The job whole (chunk null) or one chunk of it. before_output (may be
  // empty) runs before the encode takes the host output buffer; with defer
  // not null the files' writes may still run on return (*defer, see
  // EncodeOutputs).
  Status RunPart(const CompactionJobSpec& spec, const gpu::JobChunk* chunk,
                 const std::function<Status()>& before_output,
                 std::unique_ptr<gpu::PendingWrites>* defer, CompactionJobResult* result);
  // Whether the job fits the budget whole, estimated from the files'
  // metadata (with direct reads, the file arena's alignment padding
  // included; decode checks the exact figure).
  bool FitsWhole(const CompactionJobSpec& spec) const;
  // The device bytes the job needs whole (FitsWhole's estimate).
  uint64_t WholeJobBytes(const CompactionJobSpec& spec) const;
  // The device bytes a key-first job adds to WholeJobBytes (the keys'
  // view, as large as the file arena), or 0 when the job does not go
  // key-first: options_.key_first (or ACCELKV_GPU_KEY_FIRST) off, or the
  // job and the view do not fit the budget together.
  uint64_t KeyFirstBytes(const CompactionJobSpec& spec, uint64_t whole_bytes) const;
  // A key-first job's staging groups: options_.key_first_stage_groups, or
  // ACCELKV_GPU_STAGE_GROUPS, in [1, 255].
  uint32_t StageGroups() const;
  // Whether a chunk of that many file-arena bytes (the input bytes, plus
  // direct reads' alignment padding), entries and data blocks fits (the
  // key arena estimated as the same bytes).
  bool ChunkFits(uint64_t bytes, uint64_t entries, uint64_t blocks) const;
  // Device-encode mode for this job (see device_encode_max_avg_value),
  // from the input files' metadata (before ReadInputTables).
  bool UseDeviceEncode(const CompactionJobSpec& spec) const;
  // Sets input->keys up for the plan (both encode modes): keep_for_encode,
  // the value arrays, the splitter's grandparents and boundaries, the
  // device's block plan and table splits.
  void SetPlanInputs(const CompactionJobSpec& spec, gpu::JobInput* input) const;
  void RecordOutcome(const Status& s, const CompactionJobResult& result);
  uint64_t NowMicros() const;

  const GpuExecutorOptions options_;
  std::unique_ptr<gpu::KeySortDevice> device_;
  std::shared_ptr<gpu::DeviceMemoryLedger> ledger_;  // may be null
  // Per-job scratch reused across jobs (under job_mu_): grows to the largest
  // job, like the device's pinned buffers.
  std::unique_ptr<gpu::JobInput> input_;
  std::unique_ptr<gpu::KeySortOutput> sorted_;
  std::unique_ptr<gpu::EncodeJob> encode_job_;
  std::mutex job_mu_;  // one job on the device at a time
  mutable std::mutex stats_mu_;
  GpuExecutorStats stats_;
  uint64_t last_chunks_ = 0;    // chunks of the job run last (0: run whole); under job_mu_
  bool key_first_job_ = false;  // the job runs key-first (KeyFirstBytes); under job_mu_
  int consecutive_failures_ = 0;
  uint64_t unhealthy_until_micros_ = 0;
};

// The GPU executor a database uses, per its options: nullptr when
// gpu_compaction is kOff or no usable GPU is present. *status_line gets one
// line for the LOG and accelkv.stats ("gpu compaction: on, <device>, ..."
// or "gpu compaction: off: <reason>"). With the environment variable
// ACCELKV_GPU_DEVICE=host the executor runs its stages on the CPU reference
// device instead of CUDA (tests of the GPU path on machines without a GPU);
// ACCELKV_GPU_ENCODE_CHUNK_BYTES=N sets encode_chunk_bytes (tests of the
// chunked encode; measurements); ACCELKV_GPU_MEMORY_LIMIT=N sets
// device_memory_limit (tests of chunked jobs; measurements).
std::unique_ptr<GpuCompactionExecutor> NewDatabaseGpuExecutor(const Options& options,
                                                              std::string* status_line);

}  // namespace accelkv
