#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "gpu/device_encoder.h"
#include "gpu/device_memory_ledger.h"
#include "gpu/gpu_executor.h"
#include "gpu/gpu_util.h"
#include "gpu/job_chunks.h"
#include "gpu/job_input.h"
#include "gpu/key_sort_device.h"
#include "gpu/output_planner.h"

namespace accelkv {

namespace {

std::atomic<int> g_injected{static_cast<int>(GpuStage::kNone)};
std::once_flag g_injected_from_env;

constexpr GpuStage kStages[] = {GpuStage::kAlloc, GpuStage::kCopyIn, GpuStage::kVerify,
                                GpuStage::kSort,  GpuStage::kDedup,  GpuStage::kCopyOut,
                                GpuStage::kEncode};

void ReadInjectionFromEnv() {
  const char* v = std::getenv("ACCELKV_GPU_FAIL_STAGE");
  if (v == nullptr) return;
  for (GpuStage s : kStages) {
    if (std::strcmp(v, GpuStageName(s)) == 0) g_injected.store(static_cast<int>(s));
  }
}

// The job's input files by their metadata: the file arena's bytes (with
// direct reads' alignment padding: ArenaSpanBytes of each file, read
// whole), the files' bytes and their entries.
struct InputFiles {
  uint64_t arena = 0;
  uint64_t bytes = 0;
  uint64_t entries = 0;
};
InputFiles SumInputFiles(const CompactionJobSpec& spec) {
  InputFiles sum;
  for (int which = 0; which < 2; ++which) {
    for (const FileMetaPtr& f : spec.compaction->inputs(which)) {
      sum.arena += gpu::ArenaSpanBytes(spec.table_options.direct_compaction_reads, 0, f->file_size);
      sum.bytes += f->file_size;
      sum.entries += f->num_entries;
    }
  }
  return sum;
}

}  // namespace

const char* GpuStageName(GpuStage stage) {
  switch (stage) {
    case GpuStage::kNone:
      return "none";
    case GpuStage::kAlloc:
      return "alloc";
    case GpuStage::kCopyIn:
      return "copy_in";
    case GpuStage::kVerify:
      return "verify";
    case GpuStage::kSort:
      return "sort";
    case GpuStage::kDedup:
      return "dedup";
    case GpuStage::kCopyOut:
      return "copy_out";
    case GpuStage::kEncode:
      return "encode";
  }
  return "unknown";
}

namespace gpu {

GpuStage InjectedFailure() {
  std::call_once(g_injected_from_env, ReadInjectionFromEnv);
  return static_cast<GpuStage>(g_injected.load());
}

uint64_t KeySortDevice::BytesNeeded(uint64_t arena_bytes, uint64_t key_arena_bytes,
                                    uint64_t entries, uint64_t blocks) {
  // Both arenas and the per-entry arrays stay from decode to the end of the
  // encode: key offset and size, value offset and size (24), the kept order
  // (4). Sort phase per entry: flags (1) + two sort item arrays (32) +
  // merge-sort scratch (~16) + keep flag (1) + index (4), then the plan
  // inputs (sizeof(PlanEntry)) and the block plan's nominal sizes, their
  // prefix sums, block flags and indices (24) and its records (one
  // BlockRun per output block, counted like the input's); rounded up. Encode phase: the output data
  // blocks (each block's prefix and suffixes are at most its keys, so at
  // most the key arena plus the values plus two 4-byte end offsets per
  // entry and 21 bytes of footer and trailer per block), the output tables'
  // filter blocks (at most 8 bytes per key at the database's largest 64
  // bits per key, plus a line, footer and trailer, 74 bytes, per table: at
  // most one table per block) and the planned blocks; output blocks are
  // counted like the input's. The larger phase is what must fit beside what
  // stays.
  constexpr uint64_t kResidentPerEntry = 32;
  // The radix path (fixed-width keys) adds two 24-byte key buffers and a
  // 4-byte value buffer per entry.
  constexpr uint64_t kSortPerEntry = 56 + 52 + sizeof(PlanEntry) + 24;
  constexpr uint64_t kSlack = 32ull << 20;
  // Per block: its span, and its index if it is large enough for a
  // thread block of the verify.
  const uint64_t sort =
      entries * kSortPerEntry + blocks * (sizeof(BlockSpan) + sizeof(uint32_t) + sizeof(BlockRun));
  const uint64_t out = arena_bytes + key_arena_bytes + (8 + 8) * entries + (21 + 74) * blocks;
  const uint64_t encode = out + blocks * sizeof(EncodeBlock);
  return arena_bytes + key_arena_bytes + entries * kResidentPerEntry + std::max(sort, encode) +
         kSlack;
}

#if !defined(ACCELKV_WITH_CUDA)
std::unique_ptr<KeySortDevice> NewCudaKeySortDevice(const GpuExecutorOptions& /*options*/,
                                                    std::string* reason) {
  *reason = "no GPU: built without CUDA (ACCELKV_WITH_CUDA=OFF)";
  return nullptr;
}
#endif

}  // namespace gpu

std::unique_ptr<GpuCompactionExecutor> GpuCompactionExecutor::Create(
    const GpuExecutorOptions& options, std::string* reason) {
  std::unique_ptr<gpu::KeySortDevice> device = gpu::NewCudaKeySortDevice(options, reason);
  if (device == nullptr) return nullptr;
  return std::make_unique<GpuCompactionExecutor>(options, std::move(device));
}

std::unique_ptr<GpuCompactionExecutor> NewDatabaseGpuExecutor(const Options& options,
                                                              std::string* status_line) {
  if (options.gpu_compaction == GpuCompaction::kOff) {
    *status_line = "gpu compaction: off (options.gpu_compaction = kOff)";
    return nullptr;
  }
  GpuExecutorOptions gopts;
  gopts.min_input_bytes =
      options.gpu_compaction == GpuCompaction::kForce ? 0 : options.gpu_min_compaction_bytes;
  gopts.device_memory_fraction = options.gpu_memory_fraction;
  // Forced: the device also splits small tables (docs/GPU.md, "Table
  // splits"), so the database's tests with forced GPU compaction reach it.
  if (options.gpu_compaction == GpuCompaction::kForce) gopts.device_split_min_bytes = 0;
  // Tests and measurements: the device-encode chunk size in bytes.
  const char* chunk = std::getenv("ACCELKV_GPU_ENCODE_CHUNK_BYTES");
  if (chunk != nullptr && std::strtoull(chunk, nullptr, 10) > 0) {
    gopts.encode_chunk_bytes = std::strtoull(chunk, nullptr, 10);
  }
  // Tests and measurements of chunked jobs: the device bytes one job may use.
  const char* limit = std::getenv("ACCELKV_GPU_MEMORY_LIMIT");
  if (limit != nullptr) gopts.device_memory_limit = std::strtoull(limit, nullptr, 10);
  std::unique_ptr<GpuCompactionExecutor> executor;
  std::string reason;
  const char* device = std::getenv("ACCELKV_GPU_DEVICE");
  if (device != nullptr && std::strcmp(device, "host") == 0) {
    uint64_t host_budget = 4ull << 30;
    if (gopts.device_memory_limit != 0)
      host_budget = std::min(host_budget, gopts.device_memory_limit);
    executor =
        std::make_unique<GpuCompactionExecutor>(gopts, gpu::NewHostKeySortDevice(host_budget));
  } else {
    executor = GpuCompactionExecutor::Create(gopts, &reason);
  }
  if (executor == nullptr) {
    *status_line = "gpu compaction: off, every compaction runs on the CPU: " + reason;
    return nullptr;
  }
  *status_line = std::string("gpu compaction: on, device ") + executor->DeviceName() +
                 ", jobs >= " + std::to_string(gopts.min_input_bytes) + " input bytes" +
                 ", budget " + std::to_string(executor->MemoryBudget() >> 20) + " MiB per job";
  return executor;
}

GpuCompactionExecutor::GpuCompactionExecutor(const GpuExecutorOptions& options,
                                             std::unique_ptr<gpu::KeySortDevice> device,
                                             std::shared_ptr<gpu::DeviceMemoryLedger> ledger)
    : options_(options),
      device_(std::move(device)),
      ledger_(std::move(ledger)),
      input_(std::make_unique<gpu::JobInput>()),
      sorted_(std::make_unique<gpu::KeySortOutput>()),
      encode_job_(std::make_unique<gpu::EncodeJob>()) {
  if (ledger_ == nullptr && device_->SharedMemoryCapacity() > 0) {
    ledger_ = gpu::DeviceMemoryLedger::ForDevice(device_->Name(), device_->SharedMemoryCapacity());
  }
}

GpuCompactionExecutor::~GpuCompactionExecutor() = default;

void GpuCompactionExecutor::SetInjectedFailure(GpuStage stage) {
  std::call_once(g_injected_from_env, ReadInjectionFromEnv);
  g_injected.store(static_cast<int>(stage));
}

uint64_t GpuCompactionExecutor::NowMicros() const {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

bool GpuCompactionExecutor::healthy() const {
  std::lock_guard<std::mutex> l(stats_mu_);
  return NowMicros() >= unhealthy_until_micros_;
}

bool GpuCompactionExecutor::FitsWhole(const CompactionJobSpec& spec) const {
  return WholeJobBytes(spec) <= device_->MemoryBudget();
}

uint64_t GpuCompactionExecutor::WholeJobBytes(const CompactionJobSpec& spec) const {
  // Every data block holds at least one entry; plus filter and properties
  // blocks per table. The key arena's size is known only after decode (which
  // checks the budget again, exactly): estimated here as the input bytes,
  // an over-estimate unless keys share long block prefixes. The bytes are
  // the file arena's (InputFiles::arena).
  const Compaction& c = *spec.compaction;
  const InputFiles in = SumInputFiles(spec);
  const uint64_t files = c.num_input_files(0) + c.num_input_files(1);
  return gpu::KeySortDevice::BytesNeeded(in.arena, in.arena, in.entries, in.entries + 2 * files);
}

uint64_t GpuCompactionExecutor::KeyFirstBytes(const CompactionJobSpec& spec,
                                              uint64_t whole_bytes) const {
  const InputFiles in = SumInputFiles(spec);
  bool on = options_.key_first &&
            (in.entries == 0 || in.bytes / in.entries >= options_.key_first_min_bytes_per_entry);
  if (const char* v = std::getenv("ACCELKV_GPU_KEY_FIRST"); v != nullptr) {
    on = std::strcmp(v, "0") != 0;  // 1: whatever the values' size
  }
  if (!on) return 0;
  const uint64_t budget = device_->MemoryBudget();
  return whole_bytes <= budget && in.arena <= budget - whole_bytes ? in.arena : 0;
}

uint32_t GpuCompactionExecutor::StageGroups() const {
  uint64_t groups = options_.key_first_stage_groups;
  if (const char* v = std::getenv("ACCELKV_GPU_STAGE_GROUPS"); v != nullptr) {
    groups = std::strtoull(v, nullptr, 10);
  }
  return static_cast<uint32_t>(std::clamp<uint64_t>(groups, 1, 255));
}

bool GpuCompactionExecutor::ChunkFits(uint64_t bytes, uint64_t entries, uint64_t blocks) const {
  return gpu::KeySortDevice::BytesNeeded(bytes, bytes, entries, blocks) <= device_->MemoryBudget();
}

bool GpuCompactionExecutor::ShouldOffload(const CompactionJobSpec& spec) const {
  if (!healthy()) return false;
  if (spec.internal_comparator == nullptr ||
      !spec.internal_comparator->user_comparator()->IsBytewise()) {
    return false;
  }
  const Compaction& c = *spec.compaction;
  if (c.TotalInputBytes() < options_.min_input_bytes) return false;
  return FitsWhole(spec) || !c.subcompaction_boundaries().empty();
}

bool GpuCompactionExecutor::NeedsChunkBoundaries(const CompactionJobSpec& spec) const {
  if (!healthy() || spec.internal_comparator == nullptr ||
      !spec.internal_comparator->user_comparator()->IsBytewise()) {
    return false;
  }
  const Compaction& c = *spec.compaction;
  return c.TotalInputBytes() >= options_.min_input_bytes && !FitsWhole(spec);
}

Status GpuCompactionExecutor::ChunkBoundaries(const CompactionJobSpec& spec,
                                              std::vector<std::string>* boundaries) {
  std::vector<gpu::TableIndex> indexes;
  double cpu = 0;
  Status s = gpu::ReadTableIndexes(spec, &indexes, &cpu);
  if (!s.ok()) return s;
  // Ranges that need at most half the budget beyond the fixed slack:
  // chunks group them up to the whole budget, and the exact check at decode
  // (the key arena's real size, here estimated as the input bytes) has room
  // to spare. The bytes are a range's file arena, with direct reads'
  // alignment padding.
  const uint64_t slack = gpu::KeySortDevice::BytesNeeded(0, 0, 0, 0);
  const uint64_t budget = device_->MemoryBudget();
  const uint64_t half = budget > slack ? (budget - slack) / 2 : 0;
  *boundaries = gpu::ChunkBoundaries(
      indexes, spec.compaction->subcompaction_boundaries(),
      spec.table_options.direct_compaction_reads,
      [slack, half](uint64_t bytes, uint64_t entries, uint64_t blocks) {
        return gpu::KeySortDevice::BytesNeeded(bytes, bytes, entries, blocks) - slack <= half;
      });
  return Status::OK();
}

const char* GpuCompactionExecutor::DeviceName() const { return device_->Name(); }

uint64_t GpuCompactionExecutor::MemoryBudget() const { return device_->MemoryBudget(); }

GpuExecutorStats GpuCompactionExecutor::GetStats() const {
  GpuExecutorStats stats;
  {
    std::lock_guard<std::mutex> l(stats_mu_);
    stats = stats_;
  }
  const gpu::PinnedPool::Stats pinned = device_->PinnedHostStats();
  stats.pinned_host_bytes = pinned.pinned_bytes;
  stats.peak_pinned_host_bytes = pinned.peak_pinned_bytes;
  stats.pinned_host_maps = pinned.maps;
  stats.pinned_host_mapped_bytes = pinned.mapped_bytes;
  return stats;
}

Status GpuCompactionExecutor::Run(const CompactionJobSpec& spec, CompactionJobResult* result) {
  std::lock_guard<std::mutex> job(job_mu_);
  *result = CompactionJobResult();
  // The job thread's CPU seconds: by stage in the stages' scopes, "other"
  // outside them (bookkeeping, waits).
  gpu::CpuStageScope job_thread(result, "other");
  const uint64_t whole_bytes = WholeJobBytes(spec);
  const uint64_t key_first_bytes = KeyFirstBytes(spec, whole_bytes);
  key_first_job_ = key_first_bytes > 0;
  // The job's device bytes set aside beside the other executors' jobs on
  // this device (a chunked job's chunks each fit the budget).
  gpu::LedgerReservation reservation;
  Status s;
  if (ledger_ != nullptr) {
    const uint64_t need = std::min(whole_bytes + key_first_bytes, device_->MemoryBudget());
    if (!reservation.Take(ledger_.get(), need)) {
      s = Status::NotSupported("gpu: other jobs hold the device memory this job needs",
                               std::to_string(need) + " bytes needed, " +
                                   std::to_string(ledger_->reserved()) + " of " +
                                   std::to_string(ledger_->capacity()) + " held");
    }
  }
  // RunLocked adds its helper threads' CPU seconds and sets last_chunks_.
  if (s.ok()) s = RunLocked(spec, whole_bytes, result);
  // A job that failed between DecodeKeys and its wait: no copy back into
  // input_'s arrays outlives the job. Then the host buffers go back to the
  // process's pool for any executor's next job (pinned_pool.h).
  {
    gpu::CpuStageScope wait_cpu(result, "release");
    (void)device_->WaitDecodedKeys(&result->stage_micros);
    device_->ReleaseHostBuffers();
    // No copy reads the lent tables now (a key-first job's run until
    // WaitVerified, or any release on a failed path).
    input_->lent_files.clear();
  }
  result->cpu_seconds += job_thread.End();
  // The device's stages (docs/GPU.md, "Stats"): copies, kernels and the
  // waits for them.
  for (const char* stage : {"copy_in", "gpu_gather", "gpu_check", "gpu_decode", "verify", "sort",
                            "dedup", "copy_out", "gpu_plan", "gpu_encode"}) {
    const auto it = result->stage_micros.find(stage);
    if (it != result->stage_micros.end()) result->device_busy_micros += it->second;
  }
  // verify ran beside the sort and the dedup for this long: counted once.
  const auto overlap = result->stage_micros.find("verify_overlap");
  if (overlap != result->stage_micros.end()) {
    result->device_busy_micros -= std::min(result->device_busy_micros, overlap->second);
  }
  RecordOutcome(s, *result);
  return s;
}

Status GpuCompactionExecutor::RunLocked(const CompactionJobSpec& spec, uint64_t whole_bytes,
                                        CompactionJobResult* result) {
  last_chunks_ = 0;
  if (!spec.internal_comparator->user_comparator()->IsBytewise()) {
    return Status::NotSupported("gpu: the user comparator is not bytewise",
                                spec.internal_comparator->user_comparator()->Name());
  }
  if (whole_bytes <= device_->MemoryBudget() ||
      spec.compaction->subcompaction_boundaries().empty()) {
    // Too large without boundaries: decode says so.
    return RunPart(spec, nullptr, nullptr, nullptr, result);
  }
  return RunChunked(spec, result);
}

Status GpuCompactionExecutor::RunChunked(const CompactionJobSpec& spec,
                                         CompactionJobResult* result) {
  // "index": the input tables' footers and index blocks, and the chunks.
  auto t = std::chrono::steady_clock::now();
  std::vector<gpu::TableIndex> indexes;
  Status s;
  std::vector<gpu::JobChunk> chunks;
  {
    gpu::CpuStageScope cpu(result, "index");
    s = gpu::ReadTableIndexes(spec, &indexes, cpu.helpers());
  }
  if (s.ok()) {
    s = gpu::PlanJobChunks(
        indexes, spec.compaction->subcompaction_boundaries(),
        spec.table_options.direct_compaction_reads,
        [this](uint64_t bytes, uint64_t entries, uint64_t blocks) {
          return ChunkFits(bytes, entries, blocks);
        },
        &chunks);
  }
  result->stage_micros["index"] += gpu::MicrosSince(t);
  if (!s.ok()) return s;
  // One chunk after another, in key order: their outputs follow one another
  // (each chunk's first key opens a new output: a boundary). Overlaps:
  // while a chunk runs, a helper thread asks the file system to read the
  // next one's parts (PrefetchChunk), and a chunk's files are still being
  // written (deferred PendingWrites) while the next chunk is read, decoded,
  // sorted and planned, up to the point where it needs the host output
  // buffer (before_output finishes them). A chunk's result is added to the
  // job's once its files are written, in chunk order; on a failure every
  // created file stays listed in result->outputs.
  std::vector<CompactionJobResult> parts(chunks.size());
  std::unique_ptr<gpu::PendingWrites> pending;  // an earlier chunk's writes
  size_t pending_chunk = 0;
  Status pending_status;
  const std::function<Status()> finish_pending = [&]() {
    if (pending != nullptr) {
      pending_status = pending->Finish();
      pending.reset();
      AccumulateJobResult(parts[pending_chunk], result);
    }
    return pending_status;
  };
  for (size_t i = 0; i < chunks.size() && s.ok(); ++i) {
    if (chunks[i].parts.empty()) continue;  // no input block can hold its keys
    std::thread prefetch;
    if (i + 1 < chunks.size()) {
      try {
        prefetch = std::thread([&spec, &next = chunks[i + 1]] { gpu::PrefetchChunk(spec, next); });
      } catch (const std::system_error&) {
        // no thread: no prefetch
      }
    }
    std::unique_ptr<gpu::PendingWrites> writes;
    s = RunPart(spec, &chunks[i], finish_pending, &writes, &parts[i]);
    if (prefetch.joinable()) prefetch.join();
    ++last_chunks_;
    // Before_output finished the earlier writes unless this chunk failed
    // before it got there.
    const Status earlier = finish_pending();
    if (s.ok()) s = earlier;
    if (writes != nullptr) {
      pending = std::move(writes);
      pending_chunk = i;
    } else {
      AccumulateJobResult(parts[i], result);
    }
  }
  const Status last = finish_pending();
  return s.ok() ? last : s;
}

Status GpuCompactionExecutor::RunPart(const CompactionJobSpec& spec, const gpu::JobChunk* chunk,
                                      const std::function<Status()>& before_output,
                                      std::unique_ptr<gpu::PendingWrites>* defer,
                                      CompactionJobResult* result) {
  gpu::JobInput& input = *input_;  // reused: its arrays keep their pages
  // "at_read", "at_decode", "at_sort", "at_encode": the wall time from the
  // part's start to the end of each step (docs/GPU.md, the stage table).
  const auto part_start = std::chrono::steady_clock::now();
  std::optional<gpu::CpuStageScope> setup_cpu(std::in_place, result, "setup");
  input.Clear();
  setup_cpu.reset();
  // "read": the wall time until every file is read, its layout validated
  // and its staged copy to the device issued (the copies overlap the reads;
  // keys-only mode stages nothing and checks the checksums instead). The
  // encode mode, from the input files' metadata: device-encode mode stages
  // each file to the device as it is read, keys-only mode keeps the values
  // on the host.
  const bool device_encode = UseDeviceEncode(spec);
  // Key-first (docs/GPU.md, "Key-first jobs"): a device-encode job run
  // whole, when its memory allows (Run, KeyFirstBytes).
  const bool key_first = key_first_job_ && device_encode && chunk == nullptr;
  device_->SetKeyFirst(key_first);
  auto t = std::chrono::steady_clock::now();
  Status s;
  {
    gpu::CpuStageScope cpu(result, "read");
    s = gpu::ReadInputTables(spec, device_.get(), chunk ? &chunk->parts : nullptr,
                             /*stage=*/device_encode, key_first ? StageGroups() : 1, &input,
                             &result->stage_micros, cpu.helpers());
  }
  // The tables' validation, measured by the threads that read them, apart
  // from the reads themselves (its scope: one of them is this thread).
  double validate = 0;
  for (const gpu::TableBlocks& tb : input.table_blocks) validate += tb.validate_cpu_seconds;
  double& read_cpu = result->stage_cpu_seconds["read"];
  validate = std::min(validate, read_cpu);
  read_cpu -= validate;
  result->stage_cpu_seconds["validate"] += validate;
  result->stage_micros["read"] += gpu::MicrosSince(t);
  result->stage_micros["at_read"] += gpu::MicrosSince(part_start);
  if (!s.ok()) return s;
  // The tables' bytes (the arena also holds direct reads' alignment padding).
  result->bytes_read = 0;
  for (const gpu::InputTable& table : input.tables) result->bytes_read += table.size;

  // "decode" (CPU: the tables' layouts in order, the key arena, flags;
  // keys-only mode: the readers' checksum results), "copy_in" (the file arena's copies'
  // device time), "copy_in_wait" and "gpu_decode" (the keys; the values'
  // places too unless the device encodes, which keeps them there).
  {
    gpu::CpuStageScope cpu(result, "decode");
    s = gpu::DecodeInputTables(spec, device_.get(), chunk ? &chunk->range : nullptr, &input,
                               /*keys_only=*/!device_encode, &result->stage_micros, cpu.helpers());
  }
  // The lent files stay open to the job's end (Run): a key-first job's
  // copies read them until WaitVerified.
  result->stage_micros["at_decode"] += gpu::MicrosSince(part_start);
  if (!s.ok()) return s;
  const uint64_t n = input.keys.num_entries();
  result->input_entries = n - input.out_of_range;

  setup_cpu.emplace(result, "setup");
  SetPlanInputs(spec, &input);  // both modes take the device's plan
  setup_cpu.reset();
  gpu::KeySortOutput& out = *sorted_;  // reused: its kept order keeps its pages
  {
    gpu::CpuStageScope cpu(result, "sort");  // the device's stages: launches and waits
    s = device_->Run(input.keys, &out, &result->stage_micros);
    // The keys came back during Run (the planner and the host encoder read them).
    const Status keys = device_->WaitDecodedKeys(&result->stage_micros);
    if (s.ok()) s = keys;
  }
  result->stage_micros["at_sort"] += gpu::MicrosSince(part_start);
  if (s.IsCorruption() && out.bad_block < input.keys.blocks.size()) {
    return gpu::BlockChecksumMismatch(input, out.bad_block);
  }
  if (!s.ok()) return s;
  result->dropped_entries = n - input.out_of_range - out.kept.size();
  // Keys-only mode: the CPU encodes (the device's part, EncodeBlocks, has
  // its own injection point).
  if (!device_encode && gpu::InjectedFailure() == GpuStage::kEncode) {
    device_->ReleaseEncodeInput();
    return Status::Aborted("gpu: injected failure at", GpuStageName(GpuStage::kEncode));
  }
  gpu::EncodeOptions encode;
  encode.chunk_bytes = options_.encode_chunk_bytes;
  encode.on_host = !device_encode;
  s = gpu::EncodeOutputs(spec, input, out, device_.get(), encode, encode_job_.get(), before_output,
                         defer, result);
  result->stage_micros["at_encode"] += gpu::MicrosSince(part_start);
  gpu::CpuStageScope release_cpu(result, "release");
  device_->ReleaseEncodeInput();  // also when the plan failed before any chunk
  // A key-first job's checksums, which its Run left to verify once the
  // copies were in: the device's encode waited for them before its first
  // chunk landed (a bad one failed it), and the release waited for them
  // otherwise; WaitVerified reports the block (OK at once for other jobs).
  // A bad checksum is the job's failure whatever else failed.
  const Status v = device_->WaitVerified(&out, &result->stage_micros);
  if (v.IsCorruption() && out.bad_block < input.keys.blocks.size()) {
    return gpu::BlockChecksumMismatch(input, out.bad_block);
  }
  return s.ok() ? v : s;
}

void GpuCompactionExecutor::SetPlanInputs(const CompactionJobSpec& spec,
                                          gpu::JobInput* input) const {
  gpu::KeySortInput& keys = input->keys;
  keys.keep_for_encode = true;
  // The device cuts the data blocks (docs/GPU.md, "Block plan");
  // ACCELKV_GPU_BLOCK_PLAN=0 leaves every entry to the CPU's plan
  // (measurements).
  const char* block_plan = std::getenv("ACCELKV_GPU_BLOCK_PLAN");
  const bool off = block_plan != nullptr && std::strcmp(block_plan, "0") == 0;
  keys.plan_block_size = off ? 0 : spec.table_options.block_size;
  keys.value_offset = &input->value_offset;
  keys.value_size = &input->value_size;
  keys.grandparents.Clear();
  keys.grandparent_bytes.assign(1, 0);
  for (const FileMetaPtr& f : spec.compaction->grandparents()) {
    const Slice largest = f->largest.Encode();
    keys.grandparents.Add(reinterpret_cast<const uint8_t*>(largest.data()), largest.size());
    keys.grandparent_bytes.push_back(keys.grandparent_bytes.back() + f->file_size);
  }
  // The device also splits the ranges into tables (docs/GPU.md, "Table
  // splits") where tables are large enough to pay for its rounds.
  const Compaction& c = *spec.compaction;
  keys.split_tables =
      keys.plan_block_size > 0 && c.max_output_file_size() >= options_.device_split_min_bytes;
  keys.split = gpu::TableSplitRule{c.max_output_file_size(), c.max_grandparent_overlap_bytes(),
                                   static_cast<uint32_t>(gpu::OutputComparatorName(spec).size()),
                                   spec.table_options.bloom_bits_per_key};
  keys.split_window = options_.device_split_window;
  keys.boundaries.Clear();
  for (const std::string& b : spec.compaction->subcompaction_boundaries()) {
    keys.boundaries.Add(reinterpret_cast<const uint8_t*>(b.data()), b.size());
  }
}

bool GpuCompactionExecutor::UseDeviceEncode(const CompactionJobSpec& spec) const {
  const char* forced = std::getenv("ACCELKV_GPU_ENCODE");
  if (forced != nullptr && std::strcmp(forced, "device") == 0) return true;
  if (forced != nullptr && std::strcmp(forced, "cpu") == 0) return false;
  // The input files' bytes per entry (their metadata), before the read: an
  // entry's value plus its key and its share of the blocks' layout, so
  // about the average value for the large values where the modes differ.
  // A chunk of a chunked job takes the whole job's mode.
  const InputFiles in = SumInputFiles(spec);
  if (in.entries == 0) return true;
  return in.bytes / in.entries <= options_.device_encode_max_avg_value;
}

void GpuCompactionExecutor::RecordOutcome(const Status& s, const CompactionJobResult& result) {
  std::lock_guard<std::mutex> l(stats_mu_);
  if (s.ok()) {
    stats_.jobs++;
    if (last_chunks_ > 0) {
      stats_.chunked_jobs++;
      stats_.chunks += last_chunks_;
    }
    stats_.input_bytes += result.bytes_read;
    stats_.output_bytes += result.bytes_written;
    stats_.cpu_seconds += result.cpu_seconds;
    stats_.device_busy_micros += result.device_busy_micros;
    AddStages(result.stage_micros, &stats_.stage_micros);
    AddStages(result.stage_cpu_seconds, &stats_.stage_cpu_seconds);
    consecutive_failures_ = 0;
  } else if (s.IsAborted()) {
    stats_.failures++;
    if (++consecutive_failures_ >= options_.max_consecutive_failures) {
      unhealthy_until_micros_ = NowMicros() + options_.unhealthy_micros;
      consecutive_failures_ = 0;
    }
  } else if (s.IsCorruption()) {
    stats_.corruptions++;
  }
}

}  // namespace accelkv
