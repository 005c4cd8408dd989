// CudaKeySortDevice: the CUDA KeySortDevice (see key_sort_device.h).
//
// One job, all on one stream:
//   stage    (BeginStaging, StageRange) the device file arena allocated
//            before the reads, each input file's range copied in as soon as
//            it is read (cudaMemcpyAsync from the pinned arena, between a
//            pair of events), while the other files are still being read
//   decode   (DecodeKeys) the file arena (unless staged whole) and the
//            blocks' layouts in,
//            DecodeKeysKernel (a group of lanes per entry, about 8 key
//            bytes each, materializes its key into the device key arena), then the key arena and
//            the entry arrays out on a second stream into pinned memory, overlapping what follows
//            (the CPU reads them after WaitDecodedKeys); both arenas and the entry arrays stay
//   copy_in  block spans + per-entry flags + snapshots (and both arenas
//            and the entry arrays when DecodeKeys did not leave them)
//   verify   VerifyKernel: a warp per block, the lanes CRC32C contiguous
//            chunks slicing-by-8 and combine them (crc32c_device.h, tables
//            in shared memory); the lowest bad block index via atomicMin
//   sort     MakeItemsKernel (8-byte big-endian key prefix + entry index),
//            then cub::DeviceMergeSort::SortKeys with the full internal-key
//            comparison on prefix ties (inputs are sorted runs; merge sort
//            handles keys of any length without padding)
//   dedup    DedupKernel: ObsoleteVersionFilter's rule per entry and its
//            predecessor (+ duplicate internal-key detection), then
//            cub::DeviceSelect::Flagged to compact the kept entry indices
//   copy_out the counters, then the kept indices
//   plan     (keep_for_encode) PlanKernel: a thread per kept entry writes
//            its PlanEntry (plan_common.h), copied to a pinned buffer
// and, in device-encode mode (EncodeBlocks, after the CPU planned the
// output; called once per chunk of output tables): the chunk's planned
// blocks in, EncodeBlocksKernel (a warp per output
// block copies its entries' key bytes and values from the arenas, entry
// arrays and kept order Run left on the device, lane 0 writes the end
// offsets, the footer and the trailer CRC32C) over parts of about 4 MiB,
// each part's bytes copied out on a second stream while the next part's
// kernel runs, then the chunk's tables' bloom filters (FilterInitKernel
// zeroes, FilterBitsKernel sets each key's probe bits with atomicOr,
// FilterCrcKernel), the tables' tails (TableTailsKernel: index and
// properties blocks, footers) and their bytes out; the inputs stay until
// ReleaseEncodeInput. Device
// memory comes from the stream-ordered default pool with its release
// threshold raised, so it is reused across jobs; the pinned host buffers
// grow and are reused. Every CUDA error becomes Aborted("gpu: <stage>: ...").
//
// The kernels: decode_kernels.cuh (verify, decode), sort_kernels.cuh (sort
// items, radix keys, dedup), encode_kernels.cuh (plan, encode, filters, tails),
// what they share in kernel_common.cuh; all compiled here, in one
// translation unit. Host helpers: cuda_support.h (errors, a job's
// allocations, events), pinned_buffer.h (pinned host memory).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpu/crc32c_device.h"
#include "gpu/cuda_support.h"
#include "gpu/decode_kernels.cuh"
#include "gpu/encode_kernels.cuh"
#include "gpu/gpu_util.h"
#include "gpu/kernel_common.cuh"
#include "gpu/key_sort_device.h"
#include "gpu/pinned_buffer.h"
#include "gpu/sort_kernels.cuh"
#include "util/align.h"

namespace accelkv {
namespace gpu {

namespace {

// Whether p lies in page-locked host memory (cudaHostAlloc or
// cudaHostRegister), which the copy engine reads asynchronously at the
// bus's rate; a copy from ordinary pages goes through the driver's bounce
// buffer, synchronously.
bool PageLocked(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // not sticky
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

// ACCELKV_GPU_WAIT (measurements): how the host waits for the device,
// "block" (the default: WaitDevice, whose last resort is to sleep), "poll"
// (the same without naps), "spin" or "yield".
const std::string& WaitMode() {
  static const std::string mode = [] {
    const char* v = std::getenv("ACCELKV_GPU_WAIT");
    return std::string(v != nullptr ? v : "block");
  }();
  return mode;
}
bool BlockingWaits() { return WaitMode() != "spin" && WaitMode() != "yield"; }

// EncodeBlocks splits a chunk into parts of about kEncodePartBytes of
// output (at most kEncodeParts), each copied back while the next one's
// kernel runs.
constexpr uint64_t kEncodePartBytes = 4ull << 20;
constexpr uint64_t kEncodeParts = 8;
// ...and of at least kMinPartBlocks blocks, where the chunk has them. A
// block of kLargeBlockBytes or more gets one thread block, so parts of one
// or two blocks kept all but one or two SMs idle: at 4 MiB values a 32 MiB
// chunk of about 8 blocks made 8 parts of one block, and gpu_encode took
// 23-25 ms for 230 MB, 7.6 ms since
// (bench/results/2026-11-26-h100-encode-part-blocks.md). Chunks of small
// blocks hold thousands and keep their 8 parts.
constexpr uint64_t kMinPartBlocks = 8;
// Keys-only mode's DecodeKeys copies the blocks' key spans in runs whose
// gaps (values) are under this (ForEachKeyRun): a copy call costs about
// what 64 KiB more of copying does at PCIe's rate.
constexpr uint64_t kKeyRunGapBytes = 64ull << 10;
// PlanStage copies the plan entries back in parts (QueuePlanCopies): up to
// kPlanSlices per subcompaction range, none under kPlanPartBytes unless its
// range is, at most kPlanParts in all.
constexpr uint64_t kPlanSlices = 4;
constexpr uint64_t kPlanParts = 64;
constexpr uint64_t kPlanPartBytes = 256 << 10;

class CudaKeySortDevice final : public KeySortDevice {
  struct PlanPart;  // below, with the members

 public:
  // crc_tables: the device's copy of the CRC32C tables (crc32c_device.h);
  // mailbox, d_mailbox: the mailbox (pinned, mapped) and the device's
  // pointer to it; max_blocks: thread blocks of kThreads that fit the
  // device at once. Owns all three.
  CudaKeySortDevice(cudaStream_t stream, uint64_t budget, uint64_t shared_capacity,
                    std::string name, Crc32cTables* crc_tables, Mailbox* mailbox,
                    Mailbox* d_mailbox, unsigned int max_blocks, bool host_pointers)
      : stream_(stream),
        budget_(budget),
        shared_capacity_(shared_capacity),
        name_(std::move(name)),
        crc_tables_(crc_tables),
        mailbox_(mailbox),
        d_mailbox_(d_mailbox),
        max_blocks_(max_blocks),
        host_pointers_(host_pointers) {
    for (cudaEvent_t& e : events_) cudaEventCreate(&e);
    for (cudaEvent_t& e : verify_events_) cudaEventCreate(&e);
    cudaEventCreateWithFlags(&bulk_done_, cudaEventDisableTiming);
  }
  ~CudaKeySortDevice() override {
    ReleaseInput();
    cudaStreamSynchronize(stream_);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    for (cudaEvent_t e : stage_events_) cudaEventDestroy(e);
    if (copy_stream_ != nullptr) {
      cudaStreamSynchronize(copy_stream_);
      cudaStreamDestroy(copy_stream_);
    }
    if (verify_stream_ != nullptr) {
      cudaStreamSynchronize(verify_stream_);
      cudaStreamDestroy(verify_stream_);
    }
    if (stage_stream_ != nullptr) {
      cudaStreamSynchronize(stage_stream_);
      cudaStreamDestroy(stage_stream_);
    }
    for (cudaEvent_t e : verify_events_) cudaEventDestroy(e);
    cudaEventDestroy(bulk_done_);
    for (cudaEvent_t e : group_events_) cudaEventDestroy(e);
    if (staged_all_ != nullptr) cudaEventDestroy(staged_all_);
    for (cudaEvent_t e : encode_events_) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    for (cudaEvent_t e : chunk_events_) cudaEventDestroy(e);
    for (cudaEvent_t e : near_events_) cudaEventDestroy(e);
    for (cudaEvent_t e : timeline_events_) cudaEventDestroy(e);
    for (cudaEvent_t e : mid_events_) cudaEventDestroy(e);
    if (timeline_origin_ != nullptr) cudaEventDestroy(timeline_origin_);
    if (keys_event_ != nullptr) cudaEventDestroy(keys_event_);
    if (spin_event_ != nullptr) cudaEventDestroy(spin_event_);
    for (cudaEvent_t e : plan_events_) cudaEventDestroy(e);
    cudaFreeHost(mailbox_);
    cudaFree(crc_tables_);
    cudaStreamDestroy(stream_);
  }

  const char* Name() const override { return name_.c_str(); }
  uint64_t MemoryBudget() const override { return budget_; }
  uint64_t SharedMemoryCapacity() const override { return shared_capacity_; }

  // Drains the stream first: no staged copy from the arena may be in
  // flight while the caller writes it or Get reallocates it.
  Status HostArena(uint64_t bytes, uint8_t** arena) override {
    ACCELKV_CUDA_TRY("alloc", DrainCopiesBack());
    CancelStaging();
    ACCELKV_CUDA_TRY("alloc", DrainStaging());  // a key-first job's copies from the arena
    ACCELKV_CUDA_TRY("alloc", SyncStream(stream_));
    return arena_.Get(bytes, "alloc", arena);
  }

  Status BeginStaging(const uint8_t* arena, uint64_t size) override {
    cudaGetLastError();  // clear a non-sticky error left by an earlier job
    ReleaseInput();
    const cudaError_t e = AllocResident(&dev_.arena, size);
    if (e != cudaSuccess) {
      ReleaseInput();
      return CudaFailure("copy_in", e);
    }
    staged_.Begin(arena, size);
    staged_arena_ = arena;
    verified_bad_ = ~uint64_t{0};
    // Key-first: the copies on stage_stream_, their host pieces listed for
    // CheckBlocks' gather (the arena's own too: StageRange).
    side_staging_ = key_first_allowed_ && host_pointers_ && EnsureStageStream() == cudaSuccess;
    // Tests: every staging group after the first held back this long.
    const char* delay = std::getenv("ACCELKV_GPU_TEST_STAGE_DELAY_US");
    stage_delay_us_ = delay != nullptr ? std::strtoull(delay, nullptr, 10) : 0;
    delayed_group_ = 0;
    // Measurements: ACCELKV_GPU_TIMELINE=1 adds the device's timeline
    // (docs/GPU.md, "Stats": tl_*), from an event recorded here.
    const char* timeline = std::getenv("ACCELKV_GPU_TIMELINE");
    timeline_ = timeline != nullptr && std::strcmp(timeline, "1") == 0;
    mid_marked_ = 0;  // none left from a job that failed before its report
    if (timeline_) {
      if (GrowEvents(&timeline_events_, 3, cudaEventDefault) != cudaSuccess ||
          GrowEvents(&mid_events_, kMidEvents, cudaEventDefault) != cudaSuccess ||
          (timeline_origin_ == nullptr && cudaEventCreate(&timeline_origin_) != cudaSuccess) ||
          cudaEventRecord(timeline_origin_, side_staging_ ? stage_stream_ : stream_) !=
              cudaSuccess) {
        cudaGetLastError();
        timeline_ = false;
      }
      timeline_host_ = std::chrono::steady_clock::now();
    }
    return Status::OK();
  }
  void SetKeyFirst(bool on) override { key_first_allowed_ = on; }

  // With the timeline on, "tl_<what>": the host's time now since the
  // timeline's origin.
  void Mark(std::map<std::string, uint64_t>* stage_micros, const char* what) const {
    if (timeline_) (*stage_micros)[std::string("tl_") + what] += MicrosSince(timeline_host_);
  }
  // ...and "tl_chunk<c><what>".
  void Mark(std::map<std::string, uint64_t>* stage_micros, size_t c, const char* what) const {
    if (timeline_) {
      (*stage_micros)["tl_chunk" + std::to_string(c) + what] += MicrosSince(timeline_host_);
    }
  }
  // With the timeline on, records mid event i on stream st; ReportMid adds
  // the device's time of each recorded since the last report.
  void MarkDevice(size_t i, cudaStream_t st) {
    if (timeline_ && cudaEventRecord(mid_events_[i], st) == cudaSuccess) mid_marked_ |= 1u << i;
  }
  void ReportMid(std::map<std::string, uint64_t>* stage_micros) {
    for (size_t i = 0; i < kMidEvents; ++i) {
      if ((mid_marked_ & (1u << i)) != 0) {
        (*stage_micros)[kMidEventNames[i]] += TimelineMicros(mid_events_[i]);
      }
    }
    mid_marked_ = 0;
  }
  // Microseconds from the timeline's origin to event e (0 if unknown).
  uint64_t TimelineMicros(cudaEvent_t e) const {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, timeline_origin_, e) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return static_cast<uint64_t>(std::max(ms, 0.0f) * 1000.0f);
  }

  // A key-first staging's group ends with an event on stage_stream_ (at
  // most kMaxStageGroups groups: later marks are ignored, so the last
  // group takes the rest).
  Status MarkStaged() override {
    if (!staged_.active()) {
      return Status::InvalidArgument("gpu: copy_in: MarkStaged without BeginStaging");
    }
    if (!side_staging_ || stage_group_ + 1 >= kMaxStageGroups) return Status::OK();
    cudaError_t e = GrowEvents(&group_events_, stage_group_ + 1, cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaEventRecord(group_events_[stage_group_], stage_stream_);
    if (e != cudaSuccess) {
      CancelStaging();
      return CudaFailure("copy_in", e);
    }
    ++stage_group_;
    return Status::OK();
  }

  Status StageRange(uint64_t offset, uint64_t size) override {
    const Slice range(reinterpret_cast<const char*>(staged_arena_ + offset), size);
    return StageCopies(offset, &range, 1);
  }

  bool DirectHostMemory(const uint8_t* src, uint64_t size) override {
    return size == 0 || KnownPinned(src, size) || (PageLocked(src) && PageLocked(src + size - 1));
  }
  Status StageFrom(uint64_t offset, const std::vector<Slice>& pieces) override {
    return StageCopies(offset, pieces.data(), pieces.size());
  }

  // The n pieces to device arena[offset, ...), one after the other, on the
  // stream between a pair of events (their elapsed times sum to the staged
  // copies' device time in DecodeKeys).
  Status StageCopies(uint64_t offset, const Slice* pieces, size_t n) {
    uint64_t size = 0;
    for (size_t i = 0; i < n; ++i) size += pieces[i].size();
    Status s = staged_.Add(offset, size);
    if (!s.ok()) return s;
    const size_t k = 2 * (staged_.ranges() - 1);
    const cudaStream_t st = side_staging_ ? stage_stream_ : stream_;
    // A piece the device cannot read in place ends the key-first staging's
    // gather (the copies stay on the side stream; CheckBlocks joins them).
    for (size_t i = 0; i < n && side_staging_; ++i) {
      if (!DirectHostMemory(reinterpret_cast<const uint8_t*>(pieces[i].data()), pieces[i].size())) {
        host_pieces_ok_ = false;
      }
    }
    cudaError_t e = GrowEvents(&stage_events_, k + 2, cudaEventDefault);
    if (e == cudaSuccess && side_staging_ && stage_delay_us_ > 0 && stage_group_ > delayed_group_) {
      delayed_group_ = stage_group_;
      DelayKernel<<<1, 1, 0, st>>>(stage_delay_us_);
      e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaEventRecord(stage_events_[k], st);
    uint64_t at = offset;
    for (size_t i = 0; i < n && e == cudaSuccess; ++i) {
      if (pieces[i].size() > 0) {
        e = cudaMemcpyAsync(dev_.arena + at, pieces[i].data(), pieces[i].size(),
                            cudaMemcpyHostToDevice, st);
        if (side_staging_) {
          bulk_pending_ = true;
          host_pieces_.push_back({at, pieces[i].size(),
                                  reinterpret_cast<const uint8_t*>(pieces[i].data()),
                                  stage_group_});
        }
      }
      at += pieces[i].size();
    }
    if (e == cudaSuccess) e = cudaEventRecord(stage_events_[k + 1], st);
    if (e != cudaSuccess) {
      CancelStaging();
      return CudaFailure("copy_in", e);
    }
    return Status::OK();
  }

  void CancelStaging() override {
    if (!staged_.active()) return;
    SyncStream(stream_);  // no copy from the host arena in flight
    ReleaseInput();       // nor on the side stream (DrainStaging)
  }
  Status HostKeyArena(uint64_t bytes, uint8_t** arena) override {
    ACCELKV_CUDA_TRY("alloc", DrainCopiesBack());  // none may still write the buffer
    return key_arena_.Get(bytes, "alloc", arena);
  }

  Status WaitDecodedKeys(std::map<std::string, uint64_t>* stage_micros) override {
    if (!keys_pending_) return Status::OK();
    const auto t = std::chrono::steady_clock::now();
    const cudaError_t e = DrainCopiesBack();
    (*stage_micros)["keys_wait"] += MicrosSince(t);
    if (e != cudaSuccess) {
      ReleaseInput();
      return CudaFailure("decode", e);
    }
    return Status::OK();
  }
  Status HostOutput(uint64_t bytes, uint8_t** out) override {
    return out_.Get(bytes, "encode", out);
  }

  Status WaitVerified(KeySortOutput* out, std::map<std::string, uint64_t>* stage_micros) override {
    const cudaError_t e = ResolveVerify(stage_micros);
    if (e != cudaSuccess) {
      ReleaseInput();
      return CudaFailure("verify", e);
    }
    if (verified_bad_ != ~uint64_t{0}) {
      out->bad_block = verified_bad_;
      out->kept.clear();
      ReleaseInput();
      return Status::Corruption("block checksum mismatch");
    }
    return Status::OK();
  }

  // Waits for the verify a key-first job's Run left running, and keeps its
  // result (verified_bad_: the lowest bad block, ~0 for none) for
  // WaitVerified; adds the stage times WaitVerified names. The verify
  // stream waited for the staged copies: one wait for both.
  cudaError_t ResolveVerify(std::map<std::string, uint64_t>* stage_micros) {
    if (!verify_pending_) return cudaSuccess;
    const auto w = std::chrono::steady_clock::now();
    cudaError_t e = SyncStream(verify_stream_);
    const uint64_t waited = MicrosSince(w);
    verify_pending_ = false;
    if (e == cudaSuccess) e = DrainStaging();
    float verify_ms = 0;
    if (e == cudaSuccess) {
      e = cudaEventElapsedTime(&verify_ms, verify_events_[0], verify_events_[1]);
    }
    uint64_t staged_micros = 0;
    uint64_t in_end = 0;  // the timeline's: the last staged copy's end
    for (uint64_t i = 0; i < deferred_stage_copies_ && e == cudaSuccess; ++i) {
      float ms = 0;
      e = cudaEventElapsedTime(&ms, stage_events_[2 * i], stage_events_[2 * i + 1]);
      staged_micros += static_cast<uint64_t>(ms * 1000.0f);
      if (timeline_) in_end = std::max(in_end, TimelineMicros(stage_events_[2 * i + 1]));
    }
    if (e == cudaSuccess && timeline_) {
      (*stage_micros)["tl_copies_in_end"] += in_end;
      (*stage_micros)["tl_verify_end"] += TimelineMicros(verify_events_[1]);
      (*stage_micros)["tl_verify_resolved"] += MicrosSince(timeline_host_);
    }
    deferred_stage_copies_ = 0;
    if (e != cudaSuccess) return e;
    const auto verify = static_cast<uint64_t>(verify_ms * 1000.0f);
    (*stage_micros)["copy_in"] += staged_micros;
    (*stage_micros)["copy_in_wait"] += waited - std::min(waited, verify);
    (*stage_micros)["verify"] += verify;
    verified_bad_ = mailbox_->verified[0];
    return cudaSuccess;
  }

  Status EncodeBlocks(const EncodeJob& job,
                      const std::vector<std::pair<uint64_t, uint64_t>>& chunks,
                      const ChunkPlacer& place, size_t queue_ahead,
                      std::map<std::string, uint64_t>* stage_micros,
                      const std::function<bool(size_t)>& landed) override {
    cudaGetLastError();
    ResetUploads();
    Status s = held_.Check(job);
    if (s.ok()) {
      JobAllocations mem(stream_);  // drains the stream before anything is freed
      s = EncodeStages(job, chunks, place, queue_ahead, stage_micros, landed, &mem);
    }
    if (!s.ok()) ReleaseInput();  // a failed call releases the input
    return s;
  }

  void ReleaseEncodeInput() override {
    if (held_.held()) ReleaseInput();
  }

  void ReleaseHostBuffers() override {
    ReleaseInput();  // nothing held (or staged) now refers to the host arenas
    // No copy may still read or write the buffers: after a failed stream
    // (a sticky error) they stay with this device, never go to another.
    for (cudaStream_t st : {stream_, copy_stream_, verify_stream_, stage_stream_}) {
      if (st != nullptr && SyncStream(st) != cudaSuccess) {
        cudaGetLastError();
        return;
      }
    }
    plan_host_ = nullptr;
    for (PinnedBuffer* b : {&arena_, &key_arena_, &out_, &plan_, &plan_runs_, &split_io_,
                            &run_count_, &plan_starts_, &upload_, &groups_host_}) {
      b->Release();
    }
  }
  PinnedPool::Stats PinnedHostStats() const override { return ProcessPinnedPool().GetStats(); }

  Status CheckBlocks(const uint8_t* arena, uint64_t arena_size, const HostVector<BlockSpan>& spans,
                     HostVector<DecodeBlock>* blocks, BlockCheckResult* result,
                     std::map<std::string, uint64_t>* stage_micros) override {
    cudaGetLastError();  // clear a non-sticky error left by an earlier job
    ResetUploads();
    if (InjectedFailure() == GpuStage::kVerify) return Injected(GpuStage::kVerify);
    // Staged whole here when the staging does not cover the arena (it
    // failed, or was never begun), as DecodeKeys would upload it.
    const bool covered = staged_.Covers(arena, arena_size) && dev_.arena != nullptr;
    if (!covered) {
      Status s = BeginStaging(arena, arena_size);
      if (s.ok()) s = StageRange(0, arena_size);
      if (!s.ok()) return s;
    }
    // Key-first (SetKeyFirst): the check reads the blocks' keys' view,
    // gathered from the host below, and stream_ does not wait for the
    // staged copies; else the check is queued behind the staged copies
    // still in flight and waited for with them: "copy_in_wait" is that
    // wait less the check's device time (its events), "gpu_check".
    Mark(stage_micros, "check_call");
    *result = BlockCheckResult();
    const uint64_t nb = spans.size();
    key_first_ = covered && side_staging_ && host_pieces_ok_ && nb > 0;
    if (key_first_ && AllocResident(&dev_.view, arena_size) != cudaSuccess) {
      cudaGetLastError();  // no room for the view: the copies first
      dev_.view = nullptr;
      key_first_ = false;
    }
    if (!key_first_) ACCELKV_CUDA_TRY("copy_in", JoinStaging());
    const auto w = std::chrono::steady_clock::now();
    if (nb == 0) {
      blocks->clear();
      ACCELKV_CUDA_TRY("verify", SyncStream(stream_));
      (*stage_micros)["copy_in_wait"] += MicrosSince(w);
      (*stage_micros)["gpu_check"] += 0;
      return Status::OK();
    }
    JobAllocations mem(stream_);  // drains the stream on every exit path
    // Device memory beside the arena: 16 + 2 * 24 + 56 bytes a block and
    // the scan's scratch, freed before DecodeKeys allocates. The budget
    // check before the read (BytesNeeded of the files' sizes, one block
    // per entry) counts the key arena as large as the file arena and over
    // 100 bytes an entry, more than this for blocks that hold entries;
    // files of many empty blocks may exceed it, and an allocation that
    // fails here fails the job over to the CPU (Aborted).
    BlockSpan* d_spans = nullptr;
    BlockSums* d_shares = nullptr;
    BlockSums* d_before = nullptr;
    CheckTotals* d_totals = nullptr;
    size_t scan_temp = 0;
    uint8_t* d_temp = nullptr;
    ACCELKV_CUDA_TRY("verify", mem.Alloc(&d_spans, nb));
    ACCELKV_CUDA_TRY("verify", mem.Alloc(&d_shares, nb));
    ACCELKV_CUDA_TRY("verify", mem.Alloc(&d_before, nb));
    // The records stay on the device for DecodeKeys, which would otherwise
    // upload them again while a key-first job's staged copies hold the link
    // (TakeCheckBlocks).
    FreeCheckBlocks();
    ACCELKV_CUDA_TRY("verify", AllocResident(&dev_.check_blocks, nb));
    DecodeBlock* const d_blocks = dev_.check_blocks;
    ACCELKV_CUDA_TRY("verify", mem.Alloc(&d_totals, 1));
    ACCELKV_CUDA_TRY(
        "verify", cub::DeviceScan::ExclusiveScan(nullptr, scan_temp, d_shares, d_before,
                                                 AddBlockSums(), BlockSums{0, 0, 0}, nb, stream_));
    ACCELKV_CUDA_TRY("verify", mem.Alloc(&d_temp, scan_temp));
    ACCELKV_CUDA_TRY("verify", cudaEventRecord(events_[0], stream_));
    ACCELKV_CUDA_TRY("verify", Upload(d_spans, spans.data(), nb * sizeof(BlockSpan)));
    MarkDevice(kCheckUploadEnd, stream_);
    // bad and fixed_min to ~0, fixed_max and max_key to 0 (the sums are
    // written by WriteDecodeBlocksKernel).
    static_assert(offsetof(CheckTotals, max_key) == offsetof(CheckTotals, fixed_max) + 8);
    ACCELKV_CUDA_TRY("verify", cudaMemsetAsync(d_totals, 0xff, sizeof(CheckTotals), stream_));
    ACCELKV_CUDA_TRY("verify", cudaMemsetAsync(&d_totals->fixed_max, 0, 16, stream_));
    if (key_first_) {
      // The staged pieces in arena order (staged from several threads).
      std::sort(host_pieces_.begin(), host_pieces_.end(),
                [](const HostPiece& a, const HostPiece& b) { return a.offset < b.offset; });
      HostPiece* d_pieces = nullptr;
      const auto np = static_cast<uint32_t>(host_pieces_.size());
      ACCELKV_CUDA_TRY("verify", mem.Alloc(&d_pieces, np));
      ACCELKV_CUDA_TRY("verify", Upload(d_pieces, host_pieces_.data(), np * sizeof(HostPiece)));
      ACCELKV_CUDA_TRY("verify", cudaEventRecord(events_[2], stream_));
      GatherKeySectionsKernel<<<WarpGrid(nb, max_blocks_), kThreads, 0, stream_>>>(
          d_pieces, np, d_spans, nb, dev_.view);
      ACCELKV_CUDA_TRY("verify", cudaGetLastError());
      ACCELKV_CUDA_TRY("verify", cudaEventRecord(events_[3], stream_));
    }
    const uint8_t* const view = KeysView();
    CheckBlocksKernel<<<Grid(nb), kThreads, 0, stream_>>>(view, d_spans, nb, d_shares, d_totals);
    ACCELKV_CUDA_TRY("verify", cudaGetLastError());
    MarkDevice(kCheckKernelEnd, stream_);
    ACCELKV_CUDA_TRY(
        "verify", cub::DeviceScan::ExclusiveScan(d_temp, scan_temp, d_shares, d_before,
                                                 AddBlockSums(), BlockSums{0, 0, 0}, nb, stream_));
    WriteDecodeBlocksKernel<<<Grid(nb), kThreads, 0, stream_>>>(view, d_spans, nb, d_before,
                                                                d_blocks, d_totals);
    ACCELKV_CUDA_TRY("verify", cudaGetLastError());
    PublishKernel<<<1, 32, 0, stream_>>>(reinterpret_cast<const unsigned long long*>(d_totals),
                                         d_mailbox_->check, 7);
    ACCELKV_CUDA_TRY("verify", cudaGetLastError());
    MarkDevice(kCheckWriteEnd, stream_);
    // Every span's record comes back (at most nb have entries): one copy,
    // one wait, then the vector is cut to those that have. Sized here,
    // while the copies and kernels run (from the last job's size:
    // JobInput::Clear).
    blocks->resize(nb);
    ACCELKV_CUDA_TRY("verify", cudaMemcpyAsync(blocks->data(), d_blocks, nb * sizeof(DecodeBlock),
                                               cudaMemcpyDeviceToHost, stream_));
    ACCELKV_CUDA_TRY("verify", cudaEventRecord(events_[1], stream_));
    ACCELKV_CUDA_TRY("verify", SyncStream(stream_));
    Mark(stage_micros, "check_waited");
    if (timeline_) {  // the device's side: the gather's start and end, the check's end
      if (key_first_) {
        (*stage_micros)["tl_gather_start"] += TimelineMicros(events_[2]);
        (*stage_micros)["tl_gather_end"] += TimelineMicros(events_[3]);
      }
      (*stage_micros)["tl_check_end"] += TimelineMicros(events_[1]);
      ReportMid(stage_micros);
    }
    const uint64_t waited = MicrosSince(w);
    float ms = 0;
    ACCELKV_CUDA_TRY("verify", cudaEventElapsedTime(&ms, events_[0], events_[1]));
    const auto check = std::min(waited, static_cast<uint64_t>(ms * 1000.0f));
    (*stage_micros)["copy_in_wait"] += waited - check;
    // Key-first: the gather's part of it apart ("gpu_gather").
    float gather_ms = 0;
    if (key_first_) {
      ACCELKV_CUDA_TRY("verify", cudaEventElapsedTime(&gather_ms, events_[2], events_[3]));
    }
    const auto gather = std::min(check, static_cast<uint64_t>(gather_ms * 1000.0f));
    if (key_first_) (*stage_micros)["gpu_gather"] += gather;
    (*stage_micros)["gpu_check"] += check - gather;
    CheckTotals totals;
    static_assert(sizeof(CheckTotals) == sizeof(mailbox_->check));
    std::memcpy(&totals, mailbox_->check, sizeof(totals));
    if (totals.bad != ~0ull) {
      result->bad_block = totals.bad >> 8;
      result->bad_code = static_cast<uint32_t>(totals.bad & 0xff);
      blocks->clear();
      return Status::OK();
    }
    if (totals.sums.blocks > nb) return Status::Aborted("gpu: verify: block count out of range");
    result->sums = totals.sums;
    if (totals.fixed_min != ~0ull) {
      result->fixed_key_size = totals.fixed_min == totals.fixed_max ? totals.fixed_min : 0;
    }
    blocks->resize(totals.sums.blocks);
    check_blocks_host_ = blocks->data();
    check_blocks_count_ = blocks->size();
    check_max_key_ = totals.max_key;
    return Status::OK();
  }

  // The device copy of the decode records CheckBlocks made, if `blocks`
  // are they (the same host array and count: nothing writes them between
  // the calls); else nullptr. The caller frees it (FreeCheckBlocks) once
  // its reads are queued.
  DecodeBlock* TakeCheckBlocks(const HostVector<DecodeBlock>& blocks) const {
    if (dev_.check_blocks == nullptr || blocks.data() != check_blocks_host_ ||
        blocks.size() != check_blocks_count_) {
      return nullptr;
    }
    return dev_.check_blocks;
  }
  void FreeCheckBlocks() {
    if (dev_.check_blocks != nullptr) cudaFreeAsync(dev_.check_blocks, stream_);
    dev_.check_blocks = nullptr;
    check_blocks_host_ = nullptr;
    check_blocks_count_ = 0;
  }

  Status DecodeKeys(const DecodeInput& in, DecodeOutput* out,
                    std::map<std::string, uint64_t>* stage_micros) override {
    cudaGetLastError();  // clear a non-sticky error left by an earlier job
    ResetUploads();
    // The file arena BeginStaging/StageRange put on the device, if it is
    // this input's and whole: kept, with the copies' events to time.
    const bool staged = staged_.Covers(in.arena, in.arena_size) && dev_.arena != nullptr;
    const uint64_t staged_copies = staged ? staged_.ranges() : 0;  // event pairs to time
    if (staged) {
      staged_.Reset();
    } else {
      ReleaseInput();
    }
    Mark(stage_micros, "decode_call");
    Status s;
    {
      JobAllocations mem(stream_);  // drains the stream on every exit path
      s = DecodeStages(in, staged, staged_copies, out, stage_micros, &mem);
    }
    Mark(stage_micros, "decode_done");
    if (s.ok()) {
      decoded_.Hold(in.arena, in.arena_size, in.key_arena, in.key_arena_size);
    } else {
      ReleaseInput();
    }
    return s;
  }

  Status Run(const KeySortInput& in, KeySortOutput* out,
             std::map<std::string, uint64_t>* stage_micros) override {
    cudaGetLastError();  // clear a non-sticky error left by an earlier job
    ResetUploads();
    plan_count_ = 0;      // WaitPlan refuses every position until PlanStage
    if (plan_pending_) {  // an earlier plan's copies, left by a failed job
      ACCELKV_CUDA_TRY("alloc", DrainCopiesBack());
    }
    FreePlanDevice();  // an earlier block plan's entries
    plan_block_size_ = 0;
    out->runs = nullptr;
    out->num_runs = 0;
    out->table_starts.clear();
    // The arenas DecodeKeys left on the device, if they are this input's.
    const bool resident =
        decoded_.Holds(in.arena, in.arena_size, in.key_arena, in.key_arena_size) &&
        dev_.arena != nullptr && dev_.entries == in.num_entries();
    if (resident) {
      decoded_.Release();
      held_.Release();
    } else {
      ReleaseInput();
    }
    // An earlier job's verify result (kept for its WaitVerified by the
    // releases above) is not this one's: a keys-only or chunked job's
    // WaitVerified after a key-first job's checksum mismatch returns OK.
    verified_bad_ = ~uint64_t{0};
    out->plan = nullptr;
    out->boundary_starts.clear();
    out->bad_block = ~uint64_t{0};
    // Resident: the value arrays are on the device (DecodeKeys), whatever
    // the host holds.
    Status s = in.CheckFlags();
    if (s.ok() && !resident) s = in.CheckEncodeInputs();
    Mark(stage_micros, "run_call");
    if (s.ok()) {
      JobAllocations mem(stream_);  // drains the stream on every exit path
      s = RunStages(in, resident, out, stage_micros, &mem);
      Mark(stage_micros, "run_stages");
    }
    Mark(stage_micros, "run_done");
    ReportMid(stage_micros);  // BlockRuns' marks (their waits are done)
    if (s.ok() && in.keep_for_encode) {
      held_.Hold(in);
    } else {
      ReleaseInput();
    }
    return s;
  }

 private:
  static Status Injected(GpuStage stage) {
    return Status::Aborted("gpu: injected failure at", GpuStageName(stage));
  }

  // What stays on the device from DecodeKeys (or Run) to EncodeBlocks: the
  // two arenas, the per-entry arrays and, after a Run with keep_for_encode,
  // the kept order, and the output buffer of the EncodeBlocks calls. Freed
  // by ReleaseEncodeInput, a failed EncodeBlocks, the next DecodeKeys or
  // Run (unless it takes them over) or the destructor.
  struct Resident {
    uint8_t* arena = nullptr;
    uint8_t* key_arena = nullptr;
    uint64_t* key_offset = nullptr;
    uint32_t* key_size = nullptr;
    uint64_t* value_offset = nullptr;
    uint32_t* value_size = nullptr;
    uint32_t* kept = nullptr;
    uint8_t* out = nullptr;  // the encoded data blocks (first EncodeBlocks call)
    // Key-first jobs: the blocks' keys' view (CheckBlocks to DecodeKeys),
    // and the deferred verify's inputs and result (Run to its release).
    uint8_t* view = nullptr;
    // CheckBlocks' decode records, which DecodeKeys then reads where they
    // are (check_blocks_host_, check_blocks_count_).
    DecodeBlock* check_blocks = nullptr;
    BlockSpan* verify_blocks = nullptr;
    uint32_t* verify_large = nullptr;
    Counters* verify_counters = nullptr;
    uint64_t entries = 0;
    uint64_t kept_count = 0;
    uint64_t out_size = 0;
  };

  template <typename T>
  cudaError_t AllocResident(T** p, uint64_t count) {
    void* raw = nullptr;
    const cudaError_t e = cudaMallocAsync(&raw, std::max<uint64_t>(count * sizeof(T), 1), stream_);
    *p = e == cudaSuccess ? static_cast<T*>(raw) : nullptr;
    return e;
  }
  // Allocates what stays on the device; the file arena unless staging
  // left it there.
  cudaError_t AllocInput(uint64_t arena_size, uint64_t key_arena_size, uint64_t entries) {
    cudaError_t e;
    if (dev_.arena == nullptr && (e = AllocResident(&dev_.arena, arena_size)) != cudaSuccess) {
      return e;
    }
    if ((e = AllocResident(&dev_.key_arena, key_arena_size)) != cudaSuccess) return e;
    if ((e = AllocResident(&dev_.key_offset, entries)) != cudaSuccess) return e;
    if ((e = AllocResident(&dev_.key_size, entries)) != cudaSuccess) return e;
    if ((e = AllocResident(&dev_.value_offset, entries)) != cudaSuccess) return e;
    if ((e = AllocResident(&dev_.value_size, entries)) != cudaSuccess) return e;
    if ((e = AllocResident(&dev_.kept, entries)) != cudaSuccess) return e;
    dev_.entries = entries;
    return cudaSuccess;
  }
  // Waits for the copies back on copy_stream_ that may still run:
  // DecodeStages' keys and entry arrays, PlanStage's plan parts.
  cudaError_t DrainCopiesBack() {
    if (!keys_pending_ && !plan_pending_) return cudaSuccess;
    keys_pending_ = false;
    plan_pending_ = false;
    return SyncStream(copy_stream_);
  }

  void ReleaseInput() {
    DrainCopiesBack();  // no copy back reads what is freed here
    // Nor a key-first job's verify (its result kept for WaitVerified) or
    // staged copies (which read the caller's lent pieces: done when this
    // returns).
    std::map<std::string, uint64_t> unreported;
    if (ResolveVerify(&unreported) != cudaSuccess) {
      SyncStream(verify_stream_);
      cudaGetLastError();
    }
    DrainStaging();
    FreePlanDevice();
    FreeCheckBlocks();
    void* ptrs[] = {dev_.arena,        dev_.key_arena,     dev_.key_offset,   dev_.key_size,
                    dev_.value_offset, dev_.value_size,    dev_.kept,         dev_.out,
                    dev_.view,         dev_.verify_blocks, dev_.verify_large, dev_.verify_counters};
    for (void* p : ptrs) {
      if (p != nullptr) cudaFreeAsync(p, stream_);
    }
    dev_ = Resident();
    held_.Release();
    decoded_.Release();
    staged_.Reset();
    key_first_ = false;
    side_staging_ = false;
    host_pieces_ok_ = true;
    host_pieces_.clear();
    deferred_stage_copies_ = 0;
    stage_group_ = 0;
    groups_count_ = 0;
    timeline_ = false;  // until the next BeginStaging
  }

  // Makes stream_ wait for the staged copies on stage_stream_ (a staging
  // that went no key-first way): what follows on stream_ sees the arena.
  cudaError_t JoinStaging() {
    if (!bulk_pending_) return cudaSuccess;
    cudaError_t e = cudaEventRecord(bulk_done_, stage_stream_);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(stream_, bulk_done_, 0);
    return e;
  }
  // Waits for the staged copies on stage_stream_.
  cudaError_t DrainStaging() {
    if (!bulk_pending_) return cudaSuccess;
    bulk_pending_ = false;
    return SyncStream(stage_stream_);
  }
  cudaError_t EnsureStageStream() {
    if (stage_stream_ != nullptr) return cudaSuccess;
    return cudaStreamCreateWithFlags(&stage_stream_, cudaStreamNonBlocking);
  }

  // Copies host bytes to device memory on stream_. While a key-first job's
  // staged copies may still run they hold the copy engine, and an upload
  // queued there waited for all of them (2.5-2.9 ms a job on the H100), so
  // a kernel copies the bytes instead, reading page-locked memory where it
  // is (a pageable source is copied into upload_ first; with no room left
  // there, the copy engine after all).
  cudaError_t Upload(void* dst, const void* src, uint64_t bytes) {
    if (bytes == 0) return cudaSuccess;
    if (!(key_first_ && bulk_pending_)) {
      return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_);
    }
    const auto* from = static_cast<const uint8_t*>(src);
    if (!DirectHostMemory(from, bytes)) {
      uint8_t* staging = nullptr;
      if (upload_used_ + bytes > kUploadStagingBytes ||
          !upload_.Get(kUploadStagingBytes, "copy_in", &staging).ok()) {
        return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_);
      }
      std::memcpy(staging + upload_used_, src, bytes);
      from = staging + upload_used_;
      upload_used_ = AlignUp(upload_used_ + bytes, 16);
    }
    const auto grid = static_cast<unsigned int>(std::min<uint64_t>(Grid(bytes / 8 + 1), 256));
    UploadKernel<<<grid, kThreads, 0, stream_>>>(static_cast<uint8_t*>(dst), from, bytes);
    return cudaGetLastError();
  }
  // What the check and the decode read: a key-first job's keys' view
  // (CheckBlocks to DecodeKeys), else the file arena.
  const uint8_t* KeysView() const { return dev_.view != nullptr ? dev_.view : dev_.arena; }
  // upload_'s bytes are free again: stream_ ran everything queued before
  // (every device call that uploads drains it before it returns).
  void ResetUploads() { upload_used_ = 0; }

  // DecodeKeys: the file arena in (it stays for Run) unless it was staged
  // (staged_copies copies, timed by stage_events_), the key arena built on
  // the device, then the keys and the entry arrays back to the host.
  Status DecodeStages(const DecodeInput& in, bool staged, uint64_t staged_copies, DecodeOutput* out,
                      std::map<std::string, uint64_t>* stage_micros, JobAllocations* mem) {
    const uint64_t n = in.entries;
    const uint64_t nb = in.blocks.size();
    DecodeBlock* d_blocks = TakeCheckBlocks(in.blocks);
    const bool checked = d_blocks != nullptr;
    unsigned long long* d_bad = nullptr;
    ACCELKV_CUDA_TRY("decode", AllocInput(in.arena_size, in.key_arena_size, n));
    if (!checked) ACCELKV_CUDA_TRY("decode", mem->Alloc(&d_blocks, nb));
    ACCELKV_CUDA_TRY("decode", mem->Alloc(&d_bad, 1));
    uint64_t* const d_key_offset = dev_.key_offset;
    uint32_t* const d_key_size = dev_.key_size;
    uint64_t* const d_value_offset = dev_.value_offset;
    uint32_t* const d_value_size = dev_.value_size;

    uint64_t staged_micros = 0;
    if (staged && key_first_) {
      // Key-first: the copies run on; WaitVerified waits for them and
      // times them.
      deferred_stage_copies_ = staged_copies;
      (*stage_micros)["copy_in_wait"] += 0;
    } else if (staged) {
      // The wait for the staged copies still in flight (only they and
      // stream-ordered allocations are queued; a stream sync blocks rather
      // than spins) is what the overlap left on the critical path; their
      // events give the copies' device time.
      ACCELKV_CUDA_TRY("copy_in", JoinStaging());
      const auto w = std::chrono::steady_clock::now();
      ACCELKV_CUDA_TRY("copy_in", SyncStream(stream_));
      (*stage_micros)["copy_in_wait"] += MicrosSince(w);
      for (uint64_t i = 0; i < staged_copies; ++i) {
        float ms = 0;
        ACCELKV_CUDA_TRY("copy_in",
                         cudaEventElapsedTime(&ms, stage_events_[2 * i], stage_events_[2 * i + 1]));
        staged_micros += static_cast<uint64_t>(ms * 1000.0f);
      }
    }
    ACCELKV_CUDA_TRY("copy_in", cudaEventRecord(events_[0], stream_));
    if (!staged && in.keys_only) {
      // Keys-only mode: the blocks' keys and end offsets, runs of them with
      // gaps under kKeyRunGapBytes in one copy (at 4 KiB values a copy per
      // block took 190-210 ms a job; bench/results/2026-11-26-h100-keys-only-
      // host-values.md); larger values stay on the host.
      cudaError_t e = cudaSuccess;
      ForEachKeyRun(in.blocks, kKeyRunGapBytes, [&](uint64_t offset, uint64_t size) {
        if (e == cudaSuccess) {
          e = Upload(dev_.arena + offset, in.arena + offset, size);
        }
      });
      ACCELKV_CUDA_TRY("copy_in", e);
    } else if (!staged) {
      ACCELKV_CUDA_TRY("copy_in", Upload(dev_.arena, in.arena, in.arena_size));
    }
    if (!checked) {
      ACCELKV_CUDA_TRY("copy_in", Upload(d_blocks, in.blocks.data(), nb * sizeof(DecodeBlock)));
    }
    ACCELKV_CUDA_TRY("copy_in", cudaMemsetAsync(d_bad, 0xff, sizeof(*d_bad), stream_));
    ACCELKV_CUDA_TRY("copy_in", cudaEventRecord(events_[1], stream_));

    const auto t0 = std::chrono::steady_clock::now();
    if (n > 0) {
      // The check's largest average key where the records are its (a host
      // pass over every record took 0.2 ms, with the device idle).
      const uint32_t lanes = checked ? DecodeLanesForKeySize(check_max_key_)
                                     : DecodeLanesPerEntry(in.blocks.data(), nb);
      const uint32_t shift = static_cast<uint32_t>(__builtin_ctz(lanes));
      DecodeKeysKernel<<<Grid(n * lanes), kThreads, 0, stream_>>>(
          KeysView(), dev_.key_arena, d_blocks, nb, n, shift, d_key_offset, d_key_size,
          d_value_offset, d_value_size, d_bad);
      ACCELKV_CUDA_TRY("decode", cudaGetLastError());
    }
    FreeCheckBlocks();  // after the kernel, in stream order
    if (timeline_) ACCELKV_CUDA_TRY("decode", cudaEventRecord(events_[2], stream_));
    if (dev_.view != nullptr) {  // nothing reads the keys' view after the decode
      cudaFreeAsync(dev_.view, stream_);
      dev_.view = nullptr;
    }
    out->key_offset->resize(n);
    out->key_size->resize(n);
    if (out->values_to_host) {
      out->value_offset->resize(n);
      out->value_size->resize(n);
    } else {
      out->value_offset->clear();  // they stay on the device for Run
      out->value_size->clear();
    }
    // The keys and the entry arrays go back on copy_stream_ once the kernel
    // ran, into pinned memory (HostVector), and the call returns without
    // waiting for them: they overlap Run's sort and dedup on stream_, and
    // the host waits only where it reads them (WaitDecodedKeys). Nothing
    // on stream_ writes what they read until ReleaseInput, which drains
    // them first. The lowest bad entry, which the call does wait for, goes
    // to the mailbox, not through the copy engine behind them.
    PublishKernel<<<1, 32, 0, stream_>>>(d_bad, &d_mailbox_->bad_entry, 1);
    ACCELKV_CUDA_TRY("decode", cudaGetLastError());
    ACCELKV_CUDA_TRY("decode", EnsureCopyStream());
    ACCELKV_CUDA_TRY("decode", cudaEventRecord(keys_event_, stream_));
    ACCELKV_CUDA_TRY("decode", cudaStreamWaitEvent(copy_stream_, keys_event_, 0));
    keys_pending_ = true;
    ACCELKV_CUDA_TRY("decode", cudaMemcpyAsync(in.key_arena, dev_.key_arena, in.key_arena_size,
                                               cudaMemcpyDeviceToHost, copy_stream_));
    ACCELKV_CUDA_TRY("decode", cudaMemcpyAsync(out->key_offset->data(), d_key_offset, n * 8,
                                               cudaMemcpyDeviceToHost, copy_stream_));
    ACCELKV_CUDA_TRY("decode", cudaMemcpyAsync(out->key_size->data(), d_key_size, n * 4,
                                               cudaMemcpyDeviceToHost, copy_stream_));
    if (out->values_to_host) {
      ACCELKV_CUDA_TRY("decode", cudaMemcpyAsync(out->value_offset->data(), d_value_offset, n * 8,
                                                 cudaMemcpyDeviceToHost, copy_stream_));
      ACCELKV_CUDA_TRY("decode", cudaMemcpyAsync(out->value_size->data(), d_value_size, n * 4,
                                                 cudaMemcpyDeviceToHost, copy_stream_));
    }
    ACCELKV_CUDA_TRY("decode", SyncStream(stream_));
    Mark(stage_micros, "decode_waited");
    if (timeline_) {  // the device's side: the uploads' end, the kernel's end
      (*stage_micros)["tl_decode_upload_end"] += TimelineMicros(events_[1]);
      (*stage_micros)["tl_decode_kernel_end"] += TimelineMicros(events_[2]);
    }
    const unsigned long long bad = mailbox_->bad_entry;
    out->bad_entry = bad == ~0ull ? ~uint64_t{0} : static_cast<uint64_t>(bad);
    float ms = 0;
    ACCELKV_CUDA_TRY("decode", cudaEventElapsedTime(&ms, events_[0], events_[1]));
    (*stage_micros)["copy_in"] += staged_micros + static_cast<uint64_t>(ms * 1000.0f);
    (*stage_micros)["gpu_decode"] += MicrosSince(t0);
    return Status::OK();
  }

  // EncodeStages' gate (docs/GPU.md, "Staging groups"). A key-first job's
  // staged copies may still run when its encode begins: the gate is then
  // closed, and each part's kernels wait (on stream_) for the staging
  // groups its entries' values are in (GateEncodePart), or, without the
  // kept positions' groups (no MarkStaged), for every staged copy.
  cudaError_t BeginEncodeGate() {
    gate_waited_ = 0;
    gate_open_ = !(key_first_ && bulk_pending_);
    if (gate_open_) return cudaSuccess;
    cudaError_t e = cudaSuccess;
    if (staged_all_ == nullptr) e = cudaEventCreateWithFlags(&staged_all_, cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaEventRecord(staged_all_, stage_stream_);
    return e;
  }
  // Before the kernels of a part whose last block is `last`: stream_ waits
  // for the groups the part's entries need (the running maximum at its last
  // kept position), or for every copy.
  cudaError_t GateEncodePart(const EncodeBlock& last) {
    if (gate_open_) return cudaSuccess;
    const uint64_t end = last.first + last.n;  // the part's kept positions end here
    uint32_t need = stage_group_;              // every copy, unless the groups say less
    if (end > 0 && end <= groups_count_) need = groups_ptr_[end - 1];
    if (need >= stage_group_) {
      gate_open_ = true;
      return cudaStreamWaitEvent(stream_, staged_all_, 0);
    }
    if (need < gate_waited_) return cudaSuccess;
    gate_waited_ = need + 1;
    return cudaStreamWaitEvent(stream_, group_events_[need], 0);
  }

  // Queues one chunk: its planned blocks in, the kernels into the job's
  // device output buffer (EncodeStages allocates it, kept to the release)
  // part by part on stream_, each part's bytes back into out on
  // copy_stream_ after its kernel (an event; one copy per contiguous run of
  // its blocks), so part p's copy overlaps part p + 1's kernel; then the
  // filters and tails and their copies. Returns without waiting; the
  // chunk's small arrays stay in mem until the call ends.
  Status QueueEncodeChunk(const EncodeJob& job, uint64_t first_block, uint64_t end_block,
                          const ChunkPlace& where, JobAllocations* mem, cudaEvent_t near_end,
                          cudaEvent_t first_part_done) {
    // Recorded again below once there are parts: never left from a
    // previous chunk.
    ACCELKV_CUDA_TRY("encode", cudaEventRecord(near_end, copy_stream_));
    const uint64_t nb = end_block - first_block;
    if (nb > 0) {
      EncodeBlock* d_blocks = nullptr;
      ACCELKV_CUDA_TRY("encode", mem->Alloc(&d_blocks, nb));
      ACCELKV_CUDA_TRY("encode",
                       Upload(d_blocks, job.blocks.data() + first_block, nb * sizeof(EncodeBlock)));
      const EncodeSources src{dev_.arena,    dev_.key_arena,    dev_.kept,      dev_.key_offset,
                              dev_.key_size, dev_.value_offset, dev_.value_size};
      // Parts of about kEncodePartBytes of output (the chunk's extent, its
      // blocks with the filters and tails between its tables: a part's
      // count is all it decides), at most kEncodeParts, of at least
      // kMinPartBlocks blocks (one part when the chunk has fewer). The
      // host reads each block once, for its part, so the first part's
      // kernels start after its own blocks were read: the chunk's whole
      // list read first, and a span kept per block, made queueing a 4 KiB-
      // value job's four chunks take 2 ms of host time on the H200.
      const EncodeBlock& last = job.blocks[end_block - 1];
      const uint64_t chunk_bytes =
          last.out_offset + EncodedBlockSize(last) + 5 - job.blocks[first_block].out_offset;
      const uint64_t max_parts =
          std::max<uint64_t>(1, std::min<uint64_t>(kEncodeParts, nb / kMinPartBlocks));
      const uint64_t parts = std::clamp<uint64_t>(chunk_bytes / kEncodePartBytes, 1, max_parts);
      std::vector<std::pair<uint64_t, uint64_t>> spans;  // a part's runs of adjacent blocks
      std::vector<HugeBlock> huge;
      for (uint64_t p = 0; p < parts; ++p) {
        const uint64_t b0 = first_block + nb * p / parts;
        const uint64_t b1 = first_block + nb * (p + 1) / parts;
        spans.clear();
        huge.clear();
        uint64_t large = 0;
        uint64_t huge_tbs = 0;
        for (uint64_t i = b0; i < b1; ++i) {
          const uint64_t at = job.blocks[i].out_offset;
          const uint64_t size = EncodedBlockSize(job.blocks[i]);
          if (!spans.empty() && spans.back().first + spans.back().second == at) {
            spans.back().second += size + 5;  // offset, size with trailer
          } else {
            spans.emplace_back(at, size + 5);
          }
          if (size >= kHugeBlockBytes) {
            // A block is under 4 GiB (TableBuilder's guard), so tbs < 2^15.
            const auto tbs = static_cast<uint32_t>((size + kHugeSliceBytes - 1) / kHugeSliceBytes);
            huge.push_back(
                HugeBlock{static_cast<uint32_t>(i - b0), static_cast<uint32_t>(huge_tbs), tbs});
            huge_tbs += tbs;
          } else if (size >= kLargeBlockBytes) {
            ++large;
          }
        }
        const EncodeBlock* part_blocks = d_blocks + (b0 - first_block);
        ACCELKV_CUDA_TRY("encode", GateEncodePart(job.blocks[b1 - 1]));
        if (large + huge.size() < b1 - b0) {
          EncodeBlocksKernel<<<WarpGrid(b1 - b0, max_blocks_), kThreads, 0, stream_>>>(
              crc_tables_, src, part_blocks, b1 - b0, dev_.out);
          ACCELKV_CUDA_TRY("encode", cudaGetLastError());
        }
        if (large > 0) {
          const auto grid = static_cast<unsigned int>(std::min<uint64_t>(large, max_blocks_));
          EncodeLargeBlocksKernel<<<grid, kThreads, 0, stream_>>>(crc_tables_, src, part_blocks,
                                                                  b1 - b0, dev_.out);
          ACCELKV_CUDA_TRY("encode", cudaGetLastError());
        }
        if (!huge.empty()) {
          ACCELKV_CUDA_TRY("encode", EncodeHugeBlocks(huge, huge_tbs, src, part_blocks, mem));
        }
        ACCELKV_CUDA_TRY("encode", CopyBackAfterKernels(spans, p, where));
        if (p == 0 && first_part_done != nullptr) {
          ACCELKV_CUDA_TRY("encode", cudaEventRecord(first_part_done, stream_));
        }
        // The copies of all but the last part: the host sleeps until then
        // and polls for the rest (EncodeStages' wait).
        if (p + 2 == parts || parts == 1) {
          ACCELKV_CUDA_TRY("encode", cudaEventRecord(near_end, copy_stream_));
        }
      }
      // The chunk's tables' filters, once their data blocks' kernels ran
      // (the bits kernel's atomics touch the words around each filter,
      // leaving a data block's bytes as they are).
      uint64_t first_filter = 0;
      uint64_t end_filter = 0;
      FiltersOfBlocks(job, first_block, end_block, &first_filter, &end_filter);
      const uint64_t nf = end_filter - first_filter;
      if (nf > 0) {
        EncodeFilter* d_filters = nullptr;
        ACCELKV_CUDA_TRY("encode", mem->Alloc(&d_filters, nf));
        ACCELKV_CUDA_TRY("encode", Upload(d_filters, job.filters.data() + first_filter,
                                          nf * sizeof(EncodeFilter)));
        FilterInitKernel<<<static_cast<unsigned int>(nf), kThreads, 0, stream_>>>(d_filters,
                                                                                  dev_.out);
        ACCELKV_CUDA_TRY("encode", cudaGetLastError());
        const uint64_t lo = job.blocks[first_block].first;
        const uint64_t kn = job.blocks[end_block - 1].first + job.blocks[end_block - 1].n - lo;
        FilterBitsKernel<<<Grid(kn), kThreads, 0, stream_>>>(src, d_filters, nf, lo, kn, dev_.out);
        ACCELKV_CUDA_TRY("encode", cudaGetLastError());
        FilterCrcKernel<<<WarpGrid(nf, max_blocks_), kThreads, 0, stream_>>>(crc_tables_, d_filters,
                                                                             nf, dev_.out);
        ACCELKV_CUDA_TRY("encode", cudaGetLastError());
      }
      // The chunk's tables' tails (properties, index, footer: a thread
      // block per table), then each table's filter and tail back together.
      uint64_t first_table = 0;
      uint64_t end_table = 0;
      TablesOfBlocks(job, first_block, end_block, &first_table, &end_table);
      const uint64_t nt = end_table - first_table;
      spans.clear();  // the filters and tails
      if (nt > 0) {
        EncodeTable* d_tables = nullptr;
        uint8_t* d_comparator = nullptr;
        ACCELKV_CUDA_TRY("encode", mem->Alloc(&d_tables, nt));
        ACCELKV_CUDA_TRY("encode", mem->Alloc(&d_comparator, job.comparator.size()));
        ACCELKV_CUDA_TRY(
            "encode", Upload(d_tables, job.tables.data() + first_table, nt * sizeof(EncodeTable)));
        ACCELKV_CUDA_TRY("encode",
                         Upload(d_comparator, job.comparator.data(), job.comparator.size()));
        TableTailsKernel<<<static_cast<unsigned int>(nt), kThreads, 0, stream_>>>(
            crc_tables_, src, d_blocks, first_block, d_tables, d_comparator, dev_.out);
        ACCELKV_CUDA_TRY("encode", cudaGetLastError());
        spans.reserve(nt);
        for (uint64_t i = first_table; i < end_table; ++i) {
          const EncodeTable& t = job.tables[i];
          spans.emplace_back(t.out_offset + t.data_bytes, TableFileSize(t) - t.data_bytes);
        }
      } else {  // blocks planned without tables (the device tests): their filters alone
        spans.reserve(nf);
        for (uint64_t i = first_filter; i < end_filter; ++i) {
          spans.emplace_back(job.filters[i].out_offset, EncodedFilterSize(job.filters[i]) + 5);
        }
      }
      if (!spans.empty()) {
        ACCELKV_CUDA_TRY("encode", CopyBackAfterKernels(spans, kEncodeParts, where));
      }
    }
    return Status::OK();
  }

  // The chunks one after another, up to queue_ahead of them queued before
  // the first of them is waited for (an event after its last copy back), so
  // the device encodes later chunks while earlier ones' bytes still come
  // back and the caller hands them to its writers: one call per chunk,
  // each draining both streams, left the device idle between chunks, and
  // queueing one chunk ahead left the copies back idle while the host
  // waited for a key-first job's verify before its first landed.
  Status EncodeStages(const EncodeJob& job,
                      const std::vector<std::pair<uint64_t, uint64_t>>& chunks,
                      const ChunkPlacer& place, size_t queue_ahead,
                      std::map<std::string, uint64_t>* stage_micros,
                      const std::function<bool(size_t)>& landed, JobAllocations* mem) {
    const auto t0 = std::chrono::steady_clock::now();
    Status s = CheckChunkOrder(chunks);
    if (!s.ok()) return s;
    if (dev_.out == nullptr || dev_.out_size < job.out_size) {
      if (dev_.out != nullptr) cudaFreeAsync(dev_.out, stream_);
      dev_.out = nullptr;
      dev_.out_size = 0;
      ACCELKV_CUDA_TRY("encode", AllocResident(&dev_.out, job.out_size));
      dev_.out_size = job.out_size;
    }
    ACCELKV_CUDA_TRY("encode", EnsureCopyStream());
    ACCELKV_CUDA_TRY("encode", BeginEncodeGate());
    // Every exit drains the copies: no copy to a chunk's place outlives the
    // call.
    struct Drain {
      cudaStream_t copy;
      ~Drain() { SyncStream(copy); }
    } drain{copy_stream_};
    uint64_t landed_micros = 0;
    // Waits for chunk c's copies and calls landed(c); false to stop. A
    // key-first job's verify comes before the first landed (a bad checksum
    // lands no chunk).
    auto wait = [&](size_t c, Status* st) {
      // Asleep until the copies of all but its last part are done, then
      // polling: the wake-up overlaps the last part's copies.
      cudaError_t e = WaitEvent(near_events_[c]);
      if (e == cudaSuccess) e = WaitEvent(chunk_events_[c]);
      const auto v = std::chrono::steady_clock::now();
      if (e == cudaSuccess) e = ResolveVerify(stage_micros);
      landed_micros += MicrosSince(v);
      if (e != cudaSuccess) {
        *st = CudaFailure("encode", e);
        return false;
      }
      if (verified_bad_ != ~uint64_t{0}) {
        *st = Status::Corruption("block checksum mismatch");
        return false;
      }
      Mark(stage_micros, c, "_landed");
      const auto t = std::chrono::steady_clock::now();
      const bool go_on = landed(c);
      landed_micros += MicrosSince(t);
      return go_on;
    };
    const auto queue = [&](size_t c) {
      Mark(stage_micros, c, "_checked");
      // Its place may wait for the writes of an earlier chunk (the
      // caller's time, not the device's: counted out like landed's).
      const auto t = std::chrono::steady_clock::now();
      const ChunkPlace where = place(c);
      landed_micros += MicrosSince(t);
      ACCELKV_CUDA_TRY("encode", EnsureChunkEvent(c));
      Mark(stage_micros, c, "_placed");
      Status q = QueueEncodeChunk(job, chunks[c].first, chunks[c].second, where, mem,
                                  near_events_[c], timeline_ ? timeline_events_[3 * c] : nullptr);
      Mark(stage_micros, c, "_queued");
      if (!q.ok()) return q;
      ACCELKV_CUDA_TRY("encode", cudaEventRecord(chunk_events_[c], copy_stream_));
      if (timeline_) {
        ACCELKV_CUDA_TRY("encode", cudaEventRecord(timeline_events_[3 * c + 1], stream_));
        ACCELKV_CUDA_TRY("encode", cudaEventRecord(timeline_events_[3 * c + 2], copy_stream_));
      }
      return Status::OK();
    };
    size_t done = 0;  // chunks waited for
    s = EncodeChunksInOrder(job, chunks, dev_.kept_count, queue_ahead, queue, wait, &done);
    if (timeline_) {
      // Each landed chunk: its kernels' end and its copies' end (device).
      (*stage_micros)["tl_encode_call"] += MicrosSince(timeline_host_) - MicrosSince(t0);
      for (size_t c = 0; c < done; ++c) {
        const std::string name = "tl_chunk" + std::to_string(c);
        (*stage_micros)[name + "_part0"] += TimelineMicros(timeline_events_[3 * c]);
        (*stage_micros)[name + "_encoded"] += TimelineMicros(timeline_events_[3 * c + 1]);
        (*stage_micros)[name + "_back"] += TimelineMicros(timeline_events_[3 * c + 2]);
      }
    }
    if (s.ok()) ACCELKV_CUDA_TRY("encode", SyncStream(stream_));
    const uint64_t call_micros = MicrosSince(t0);
    (*stage_micros)["gpu_encode"] += call_micros - std::min(landed_micros, call_micros);
    return s;
  }

  // resident: the arenas and the entry arrays are on the device already
  // (DecodeKeys).
  Status RunStages(const KeySortInput& in, bool resident, KeySortOutput* out,
                   std::map<std::string, uint64_t>* stage_micros, JobAllocations* mem) {
    const GpuStage fail = InjectedFailure();
    const uint64_t n = in.num_entries();
    const uint64_t nb = in.blocks.size();
    const uint32_t ns = static_cast<uint32_t>(in.snapshots.size());

    // alloc
    if (fail == GpuStage::kAlloc) return Injected(fail);
    BlockSpan* d_blocks = nullptr;
    uint8_t* d_flags = nullptr;
    uint64_t* d_snapshots = nullptr;
    SortItem* d_items = nullptr;
    uint8_t* d_keep = nullptr;
    uint32_t* d_index = nullptr;
    Counters* d_counters = nullptr;
    if (!resident) ACCELKV_CUDA_TRY("alloc", AllocInput(in.arena_size, in.key_arena_size, n));
    uint64_t* const d_key_offset = dev_.key_offset;
    uint32_t* const d_key_size = dev_.key_size;
    uint32_t* const d_kept = dev_.kept;
    // Key-first (a resident input whose staged copies may still run): the
    // verify outlives the call, so its inputs are resident too.
    const bool deferred = resident && key_first_;
    // An input of the verify: resident (*kept) when deferred, else the call's.
    const auto verify_alloc = [&](auto** p, auto** kept, uint64_t count) {
      if (!deferred) return mem->Alloc(p, count);
      const cudaError_t e = AllocResident(kept, count);
      *p = *kept;
      return e;
    };
    ACCELKV_CUDA_TRY("alloc", verify_alloc(&d_blocks, &dev_.verify_blocks, nb));
    Counters* d_verified = nullptr;  // the verify's result: d_counters unless deferred
    if (deferred) {
      ACCELKV_CUDA_TRY("alloc", AllocResident(&dev_.verify_counters, 1));
      d_verified = dev_.verify_counters;
    }
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_flags, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_snapshots, ns));
    // The deeper levels' file ranges, for the dedup's base-level test
    // (uploaded below, with the snapshots).
    const uint32_t levels = static_cast<uint32_t>(in.deeper_level_end.size());
    uint32_t* d_level_end = nullptr;
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_level_end, levels));
    DeeperLevelsView d_deeper{{}, {}, d_level_end, levels};
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_items, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_keep, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_index, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_counters, 1));
    const KeyArrays keys{dev_.key_arena, d_key_offset, d_key_size};
    const bool radix = UseRadixSort(in);
    RadixKey* d_radix[2] = {nullptr, nullptr};
    uint32_t* d_radix_index = nullptr;  // with d_index, the values' double buffer
    if (radix) {
      ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_radix[0], n));
      ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_radix[1], n));
      ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_radix_index, n));
    }
    cub::DoubleBuffer<RadixKey> radix_keys(d_radix[0], d_radix[1]);
    cub::DoubleBuffer<uint32_t> radix_values(d_radix_index, d_index);
    size_t sort_temp = 0;
    size_t select_temp = 0;
    // The packed path (PackRadixKeysKernel) sorts 64-bit keys in the same
    // buffers (24 bytes per entry each).
    cub::DoubleBuffer<uint64_t> packed_keys(reinterpret_cast<uint64_t*>(d_radix[0]),
                                            reinterpret_cast<uint64_t*>(d_radix[1]));
    unsigned long long* d_mask = nullptr;
    if (n > 0 && radix) {
      ACCELKV_CUDA_TRY(
          "alloc", cub::DeviceRadixSort::SortPairs(nullptr, sort_temp, radix_keys, radix_values, n,
                                                   RadixKeyDigits{}, stream_));
      size_t packed_temp = 0;
      ACCELKV_CUDA_TRY("alloc", cub::DeviceRadixSort::SortPairs(nullptr, packed_temp, packed_keys,
                                                                radix_values, n, 0, 64, stream_));
      sort_temp = std::max(sort_temp, packed_temp);
      ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_mask, 3));
    } else if (n > 0) {
      ACCELKV_CUDA_TRY(
          "alloc", cub::DeviceMergeSort::SortKeys(nullptr, sort_temp, d_items,
                                                  static_cast<int64_t>(n), LessOp{keys}, stream_));
    }
    if (n > 0) {  // an empty job sorts and selects nothing
      ACCELKV_CUDA_TRY("alloc", cub::DeviceSelect::Flagged(nullptr, select_temp, d_index, d_keep,
                                                           d_kept, &d_counters->num_kept,
                                                           static_cast<int64_t>(n), stream_));
    }
    uint8_t* d_temp = nullptr;
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_temp, std::max(sort_temp, select_temp)));

    // copy_in
    if (fail == GpuStage::kCopyIn) return Injected(fail);
    ACCELKV_CUDA_TRY("copy_in", cudaEventRecord(events_[0], stream_));
    if (!resident) {
      ACCELKV_CUDA_TRY("copy_in", Upload(dev_.arena, in.arena, in.arena_size));
      ACCELKV_CUDA_TRY("copy_in", Upload(dev_.key_arena, in.key_arena, in.key_arena_size));
      ACCELKV_CUDA_TRY("copy_in", Upload(d_key_offset, in.key_offset.data(), n * 8));
      ACCELKV_CUDA_TRY("copy_in", Upload(d_key_size, in.key_size.data(), n * 4));
      if (in.keep_for_encode) {
        ACCELKV_CUDA_TRY("copy_in", Upload(dev_.value_offset, in.value_offset->data(), n * 8));
        ACCELKV_CUDA_TRY("copy_in", Upload(dev_.value_size, in.value_size->data(), n * 4));
      }
    }
    ACCELKV_CUDA_TRY("copy_in", Upload(d_blocks, in.blocks.data(), nb * sizeof(BlockSpan)));
    if (in.flags.empty()) {  // no entry flagged (KeySortInput::flags)
      ACCELKV_CUDA_TRY("copy_in", cudaMemsetAsync(d_flags, 0, n, stream_));
    } else {
      ACCELKV_CUDA_TRY("copy_in", Upload(d_flags, in.flags.data(), n));
    }
    ACCELKV_CUDA_TRY("copy_in", UploadKeyLists(in.deeper_smallest, in.deeper_largest, upload_fn_,
                                               mem, &d_deeper.smallest, &d_deeper.largest));
    ACCELKV_CUDA_TRY("copy_in",
                     Upload(d_level_end, in.deeper_level_end.data(), uint64_t{levels} * 4));
    ACCELKV_CUDA_TRY("copy_in", Upload(d_snapshots, in.snapshots.data(), ns * 8));
    Counters init{~0ull, 0, 0};
    ACCELKV_CUDA_TRY("copy_in", Upload(d_counters, &init, sizeof(init)));
    if (deferred) {
      ACCELKV_CUDA_TRY("copy_in", Upload(d_verified, &init, sizeof(init)));
    } else {
      d_verified = d_counters;
    }
    // The blocks verify gives a thread block each (a pageable copy: staged
    // at once, with no wait for the stream).
    std::vector<uint32_t> large;
    for (uint64_t b = 0; b < nb && in.max_block_size >= kLargeBlockBytes; ++b) {
      if (in.blocks[b].size >= kLargeBlockBytes) large.push_back(static_cast<uint32_t>(b));
    }
    uint32_t* d_large = nullptr;
    if (!large.empty()) {
      ACCELKV_CUDA_TRY("alloc", verify_alloc(&d_large, &dev_.verify_large, large.size()));
      ACCELKV_CUDA_TRY("copy_in", Upload(d_large, large.data(), large.size() * 4));
    }
    ACCELKV_CUDA_TRY("copy_in", cudaEventRecord(events_[1], stream_));

    // verify: on its own stream, beside the sort and the dedup (its
    // result, the lowest bad block, is read with the counters at copy_out,
    // which waits for it); every exit drains it before freeing what it reads.
    // Key-first: also after the staged copies, and left running past the
    // call: WaitVerified reads its result (every release drains it first).
    if (fail == GpuStage::kVerify) return Injected(fail);
    ACCELKV_CUDA_TRY("verify", EnsureVerifyStream());
    ACCELKV_CUDA_TRY("verify", cudaStreamWaitEvent(verify_stream_, events_[1], 0));
    if (deferred) {
      ACCELKV_CUDA_TRY("verify", cudaEventRecord(bulk_done_, stage_stream_));
      ACCELKV_CUDA_TRY("verify", cudaStreamWaitEvent(verify_stream_, bulk_done_, 0));
      ACCELKV_CUDA_TRY("verify", cudaEventRecord(verify_events_[0], verify_stream_));
      verify_pending_ = true;
      verified_bad_ = ~uint64_t{0};
    } else {
      mem->DrainFirst(verify_stream_);
    }
    if (nb > large.size()) {
      VerifyKernel<<<WarpGrid(nb, max_blocks_), kThreads, 0, verify_stream_>>>(
          crc_tables_, dev_.arena, d_blocks, nb, d_verified);
      ACCELKV_CUDA_TRY("verify", cudaGetLastError());
    }
    if (!large.empty()) {
      const auto grid = static_cast<unsigned int>(std::min<uint64_t>(large.size(), max_blocks_));
      VerifyLargeBlocksKernel<<<grid, kThreads, 0, verify_stream_>>>(
          crc_tables_, dev_.arena, d_blocks, d_large, large.size(), d_verified);
      ACCELKV_CUDA_TRY("verify", cudaGetLastError());
    }
    if (deferred) {
      PublishKernel<<<1, 32, 0, verify_stream_>>>(
          reinterpret_cast<const unsigned long long*>(d_verified), d_mailbox_->verified, 1);
      ACCELKV_CUDA_TRY("verify", cudaGetLastError());
      ACCELKV_CUDA_TRY("verify", cudaEventRecord(verify_events_[1], verify_stream_));
    } else {
      ACCELKV_CUDA_TRY("verify", cudaEventRecord(events_[2], verify_stream_));
    }

    // sort
    if (fail == GpuStage::kSort) return Injected(fail);
    int packed_bits = -1;  // the packed path's key bits, or -1: the whole keys
    if (n > 0 && radix && AllowPackedRadixSort()) {
      // The bits that differ between entries: the host needs their count
      // to choose the path (one small copy back and wait, ahead of the sort).
      const auto t = std::chrono::steady_clock::now();
      ACCELKV_CUDA_TRY("sort", cudaMemsetAsync(d_mask, 0, 3 * sizeof(*d_mask), stream_));
      RadixDiffKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, n, d_mask);
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
      PublishKernel<<<1, 32, 0, stream_>>>(d_mask, d_mailbox_->radix_mask, 3);
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
      ACCELKV_CUDA_TRY("sort", SyncStream(stream_));
      Mark(stage_micros, "run_pack");
      if (timeline_) {  // the device's side: Run's uploads' end
        (*stage_micros)["tl_run_upload_end"] += TimelineMicros(events_[1]);
      }
      int bits = 0;
      for (int w = 0; w < 3; ++w) bits += __builtin_popcountll(mailbox_->radix_mask[w]);
      if (bits <= 64) packed_bits = bits;
      (*stage_micros)["sort_pack"] += MicrosSince(t);
    }
    if (packed_bits >= 0) {
      const RadixKey mask{mailbox_->radix_mask[0], mailbox_->radix_mask[1],
                          mailbox_->radix_mask[2]};
      PackRadixKeysKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, n, mask, packed_keys.Current(),
                                                             radix_values.Current());
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
      // No bit differs (a single entry, or only duplicates, which dedup
      // reports): already in order.
      if (packed_bits > 0) {
        ACCELKV_CUDA_TRY(
            "sort", cub::DeviceRadixSort::SortPairs(d_temp, sort_temp, packed_keys, radix_values, n,
                                                    0, packed_bits, stream_));
      }
      ItemsFromIndexKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, radix_values.Current(), n,
                                                              d_items);
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
    } else if (n > 0 && radix) {
      MakeRadixKeysKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, n, radix_keys.Current(),
                                                             radix_values.Current());
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
      ACCELKV_CUDA_TRY(
          "sort", cub::DeviceRadixSort::SortPairs(d_temp, sort_temp, radix_keys, radix_values, n,
                                                  RadixKeyDigits{}, stream_));
      ItemsFromRadixKernel<<<Grid(n), kThreads, 0, stream_>>>(radix_keys.Current(),
                                                              radix_values.Current(), n, d_items);
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
    } else if (n > 0) {
      MakeItemsKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, n, d_items);
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
      ACCELKV_CUDA_TRY(
          "sort", cub::DeviceMergeSort::SortKeys(d_temp, sort_temp, d_items,
                                                 static_cast<int64_t>(n), LessOp{keys}, stream_));
    }
    ACCELKV_CUDA_TRY("sort", cudaEventRecord(events_[3], stream_));

    // dedup
    if (fail == GpuStage::kDedup) return Injected(fail);
    if (n > 0) {
      DedupKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, d_flags, d_items, n, d_snapshots, ns,
                                                     d_deeper, d_keep, d_index, d_counters);
      ACCELKV_CUDA_TRY("dedup", cudaGetLastError());
      ACCELKV_CUDA_TRY("dedup", cub::DeviceSelect::Flagged(d_temp, select_temp, d_index, d_keep,
                                                           d_kept, &d_counters->num_kept,
                                                           static_cast<int64_t>(n), stream_));
    }
    ACCELKV_CUDA_TRY("dedup", cudaEventRecord(events_[4], stream_));

    // copy_out
    if (fail == GpuStage::kCopyOut) return Injected(fail);
    const auto t0 = std::chrono::steady_clock::now();
    if (!deferred) {  // verify's result
      ACCELKV_CUDA_TRY("copy_out", cudaStreamWaitEvent(stream_, events_[2], 0));
    }
    PublishKernel<<<1, 32, 0, stream_>>>(reinterpret_cast<const unsigned long long*>(d_counters),
                                         d_mailbox_->counters, 3);
    ACCELKV_CUDA_TRY("copy_out", cudaGetLastError());
    ACCELKV_CUDA_TRY("copy_out", SyncStream(stream_));
    Mark(stage_micros, "run_counters");
    Counters c;
    std::memcpy(&c, mailbox_->counters, sizeof(c));
    if (c.num_kept > n) return Status::Aborted("gpu: copy_out: kept count out of range");
    out->kept.resize(c.num_kept);
    ACCELKV_CUDA_TRY("copy_out", cudaMemcpyAsync(out->kept.data(), d_kept, c.num_kept * 4,
                                                 cudaMemcpyDeviceToHost, stream_));
    ACCELKV_CUDA_TRY("copy_out", SyncStream(stream_));
    Mark(stage_micros, "run_kept");
    const uint64_t copy_out = MicrosSince(t0);

    // Each stage from the event before it; verify and the sort both start
    // at the end of copy_in (events_[1]) and overlap.
    const char* names[4] = {"copy_in", "verify", "sort", "dedup"};
    const int from[4] = {0, 1, 1, 3};
    for (int i = 0; i < 4; ++i) {
      if (deferred && i == 1) continue;  // WaitVerified times it
      float ms = 0;
      ACCELKV_CUDA_TRY("copy_out", cudaEventElapsedTime(&ms, events_[from[i]], events_[i + 1]));
      (*stage_micros)[names[i]] += static_cast<uint64_t>(ms * 1000.0f);
    }
    (*stage_micros)["copy_out"] += copy_out;
    // The part of verify that ran beside the sort and the dedup (both in
    // the sums above; device busy time counts it once). Key-first: it
    // runs after the staged copies, beside the plan, and counts whole.
    float verify_ms = 0;
    float sort_dedup_ms = 0;
    if (!deferred) {
      ACCELKV_CUDA_TRY("copy_out", cudaEventElapsedTime(&verify_ms, events_[1], events_[2]));
      ACCELKV_CUDA_TRY("copy_out", cudaEventElapsedTime(&sort_dedup_ms, events_[1], events_[4]));
    }
    (*stage_micros)["verify_overlap"] +=
        static_cast<uint64_t>(std::min(verify_ms, sort_dedup_ms) * 1000.0f);

    if (c.bad_block != ~0ull) {
      out->bad_block = c.bad_block;
      out->kept.clear();
      return Status::Corruption("block checksum mismatch");
    }
    if (c.duplicate != 0) {
      // A bad checksum first, as without key-first.
      if (deferred) {
        const Status verified = WaitVerified(out, stage_micros);
        if (!verified.ok()) return verified;
      }
      out->kept.clear();
      return Status::Corruption("gpu: compaction input holds a duplicated internal key");
    }
    dev_.kept_count = c.num_kept;
    if (!in.keep_for_encode) return Status::OK();
    Status s = PlanStage(in, keys, out, stage_micros, mem);
    if (s.ok() && deferred) s = QueueStagedGroups(c.num_kept, mem);
    return s;
  }

  // Key-first jobs staged in groups (MarkStaged): the staging group each
  // kept position's entries need (StagedGroupsKernel, then their running
  // maximum), back to groups_host_ for EncodeStages: Run's allocations
  // (mem) drain stream_ before it returns, so the bytes are there by then.
  Status QueueStagedGroups(uint64_t k, JobAllocations* mem) {
    groups_count_ = 0;
    if (stage_group_ == 0 || k == 0 || host_pieces_.empty()) return Status::OK();
    const auto np = static_cast<uint32_t>(host_pieces_.size());  // sorted by CheckBlocks
    HostPiece* d_pieces = nullptr;
    uint8_t* d_raw = nullptr;
    size_t temp = 0;
    uint8_t* d_temp = nullptr;
    uint8_t* d_groups = nullptr;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_pieces, np));
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_raw, k));
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_groups, k));
    ACCELKV_CUDA_TRY("plan", cub::DeviceScan::InclusiveScan(nullptr, temp, d_raw, d_groups,
                                                            MaxGroup(), k, stream_));
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_temp, temp));
    ACCELKV_CUDA_TRY("plan", Upload(d_pieces, host_pieces_.data(), np * sizeof(HostPiece)));
    const auto grid = static_cast<unsigned int>(std::min<uint64_t>(Grid(k), max_blocks_));
    StagedGroupsKernel<<<grid, kThreads, 0, stream_>>>(d_pieces, np, dev_.kept, k,
                                                       dev_.value_offset, dev_.value_size, d_raw);
    ACCELKV_CUDA_TRY("plan", cudaGetLastError());
    ACCELKV_CUDA_TRY("plan", cub::DeviceScan::InclusiveScan(d_temp, temp, d_raw, d_groups,
                                                            MaxGroup(), k, stream_));
    Status s = groups_host_.Get(k, "plan", &groups_ptr_);
    if (!s.ok()) return s;
    ACCELKV_CUDA_TRY("plan",
                     cudaMemcpyAsync(groups_ptr_, d_groups, k, cudaMemcpyDeviceToHost, stream_));
    groups_count_ = k;
    return Status::OK();
  }

  // The plan inputs of the kept entries (PlanKernel) and the ranges'
  // starts (BoundaryStartsKernel, waited for); the entries go back into the
  // pinned plan buffer in parts on copy_stream_ (QueuePlanCopies), and Run
  // returns without waiting for them: the planner threads wait for the
  // parts they reach (WaitPlan).
  Status PlanStage(const KeySortInput& in, const KeyArrays& keys, KeySortOutput* out,
                   std::map<std::string, uint64_t>* stage_micros, JobAllocations* mem) {
    const auto t0 = std::chrono::steady_clock::now();
    // The keys' copies back (DecodeKeys) finished during the sort; drained
    // here, so that WaitDecodedKeys after Run waits for none of the plan's
    // copies, and so that no copy of an earlier plan is still running
    // before plan_ is reused.
    ACCELKV_CUDA_TRY("plan", DrainCopiesBack());
    (*stage_micros)["keys_wait"] += MicrosSince(t0);
    const uint64_t k = out->kept.size();
    const uint32_t nb = in.boundaries.size();
    uint64_t* d_starts = nullptr;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_starts, nb));
    KeyListView d_gp;
    KeyListView d_bounds;
    ACCELKV_CUDA_TRY(
        "plan", UploadKeyLists(in.grandparents, in.boundaries, upload_fn_, mem, &d_gp, &d_bounds));
    uint8_t* host = nullptr;
    Status s = plan_.Get(k * sizeof(PlanEntry), "plan", &host);
    if (!s.ok()) return s;
    uint8_t* host_starts = nullptr;
    s = plan_starts_.Get(uint64_t{nb} * 8, "plan", &host_starts);
    if (!s.ok()) return s;
    ACCELKV_CUDA_TRY("plan", EnsureCopyStream());
    // Outlives Run (its copies back run after it returns): freed on
    // copy_stream_ after them, or here on failure.
    PlanEntry* d_plan = nullptr;
    ACCELKV_CUDA_TRY(
        "plan", cudaMallocAsync(&d_plan, std::max<uint64_t>(k, 1) * sizeof(PlanEntry), stream_));
    cudaError_t e = cudaSuccess;
    if (k > 0) {
      PlanKernel<<<Grid(k), kThreads, 0, stream_>>>(keys, dev_.value_size, dev_.kept, k, d_gp,
                                                    d_bounds, d_plan);
      e = cudaGetLastError();
    }
    if (e == cudaSuccess && nb > 0) {
      BoundaryStartsKernel<<<Grid(nb), kThreads, 0, stream_>>>(d_plan, k, nb, d_starts);
      e = cudaGetLastError();
      if (e == cudaSuccess) {
        e = cudaMemcpyAsync(host_starts, d_starts, uint64_t{nb} * 8, cudaMemcpyDeviceToHost,
                            stream_);
      }
    }
    if (e == cudaSuccess) e = SyncStream(stream_);
    Mark(stage_micros, "plan_starts");
    const bool lazy = in.plan_block_size > 0 && k > 0;
    if (e == cudaSuccess) {
      const uint64_t* starts = reinterpret_cast<const uint64_t*>(host_starts);
      out->boundary_starts.assign(starts, starts + nb);
      // The ranges, for the block plan's cuts and the copies' parts (the
      // encoder refuses disorder).
      (void)SubcompactionRangeStarts(out->boundary_starts, k, &plan_ranges_);
      if (lazy) {
        // The data blocks of each range as one table ("Block plan"), or of
        // each table of it ("Table splits").
        plan_block_size_ = in.plan_block_size;
        uint64_t n = 0;
        const BlockRun* d_runs = nullptr;
        s = BlockRuns(plan_block_size_, d_plan, k, plan_ranges_, mem, &plan_runs_, &out->runs, &n,
                      &d_runs);
        Mark(stage_micros, "plan_runs");
        if (s.ok() && in.split_tables) {
          const auto t1 = std::chrono::steady_clock::now();
          s = SplitTables(in, d_plan, keys.key_arena, k, d_runs, n, &out->table_starts);
          // A range of several tables: every table's blocks, cut from its start.
          if (s.ok() && out->table_starts.size() + 1 > plan_ranges_.size()) {
            std::vector<uint64_t> cuts = out->table_starts;
            cuts.push_back(k);
            s = BlockRuns(plan_block_size_, d_plan, k, cuts, mem, &plan_runs_, &out->runs, &n,
                          &d_runs);
          }
          (*stage_micros)["gpu_split"] += MicrosSince(t1);
          Mark(stage_micros, "plan_split");
        }
        out->num_runs = s.ok() ? n : 0;
        if (!s.ok()) {
          cudaFreeAsync(d_plan, stream_);
          out->boundary_starts.clear();
          out->table_starts.clear();
          out->runs = nullptr;
          out->num_runs = 0;
          return s;
        }
      }
      e = QueuePlanCopies(host, d_plan, k, lazy);
    }
    if (e == cudaSuccess) {
      if (lazy) {
        plan_device_ = d_plan;  // WaitPlan copies from it; freed by the next Run or ReleaseInput
      } else {
        e = cudaFreeAsync(d_plan, copy_stream_);
      }
    }
    if (e != cudaSuccess) {
      DrainCopiesBack();               // no part still copies from d_plan
      cudaFreeAsync(d_plan, stream_);  // not yet plan_device_
      plan_parts_.clear();
      out->boundary_starts.clear();
      out->table_starts.clear();
      out->runs = nullptr;
      out->num_runs = 0;
      return CudaFailure("plan", e);
    }
    out->plan = reinterpret_cast<const PlanEntry*>(host);
    plan_count_ = k;
    (*stage_micros)["gpu_plan"] += MicrosSince(t0);
    return Status::OK();
  }

  // Queues the copies of d_plan[0, k) into host on copy_stream_, in parts,
  // each followed by an event. The parts cut each subcompaction range
  // (plan_ranges_) into up to kPlanSlices slices, and go slice by slice
  // across the ranges (every range's first slice, then every second...),
  // so each range's planner thread can start after a small part of the
  // copy; with more than kPlanParts ranges, kPlanParts equal parts in
  // order. Sets plan_parts_ (by begin) and plan_pending_. lazy (a block
  // plan): the parts are only listed; WaitPlan queues them.
  cudaError_t QueuePlanCopies(uint8_t* host, const PlanEntry* d_plan, uint64_t k, bool lazy) {
    plan_parts_.clear();
    plan_host_ = host;
    if (k == 0) return cudaSuccess;
    const std::vector<uint64_t>& range = plan_ranges_;
    const uint64_t ranges = range.size() - 1;
    // How many parts n entries make (1 to max).
    const auto parts_of = [](uint64_t n, uint64_t max) {
      return std::clamp<uint64_t>(n * sizeof(PlanEntry) / kPlanPartBytes, 1, max);
    };
    std::vector<std::pair<uint64_t, uint64_t>> order;  // [begin, end) in copy order
    if (ranges > kPlanParts) {
      const uint64_t parts = parts_of(k, kPlanParts);
      for (uint64_t i = 0; i < parts; ++i) order.emplace_back(k * i / parts, k * (i + 1) / parts);
    } else {
      const uint64_t max_slices = std::min<uint64_t>(kPlanSlices, kPlanParts / ranges);
      for (uint64_t sl = 0; sl < max_slices; ++sl) {
        for (uint64_t r = 0; r < ranges; ++r) {
          const uint64_t len = range[r + 1] - range[r];
          const uint64_t slices = parts_of(len, max_slices);
          if (sl >= slices) continue;
          order.emplace_back(range[r] + len * sl / slices, range[r] + len * (sl + 1) / slices);
        }
      }
    }
    // Blocking: the planner threads sleep in WaitPlan (an event without the
    // flag is waited for by spinning, whatever the device's flags).
    const cudaError_t made =
        GrowEvents(&plan_events_, order.size(), cudaEventBlockingSync | cudaEventDisableTiming);
    if (made != cudaSuccess) return made;
    for (const auto& [begin, end] : order) {
      if (begin == end) continue;
      plan_parts_.push_back(PlanPart{begin, end, plan_parts_.size(), false});
      if (lazy) continue;
      const cudaError_t e = QueuePlanPart(d_plan, &plan_parts_.back());
      if (e != cudaSuccess) return e;
    }
    std::sort(plan_parts_.begin(), plan_parts_.end(),
              [](const PlanPart& a, const PlanPart& b) { return a.begin < b.begin; });
    return cudaSuccess;
  }

  // The copy of a part back on copy_stream_, then its event.
  cudaError_t QueuePlanPart(const PlanEntry* d_plan, PlanPart* part) {
    plan_pending_ = true;
    part->queued = true;
    cudaError_t e = cudaMemcpyAsync(
        plan_host_ + part->begin * sizeof(PlanEntry), d_plan + part->begin,
        (part->end - part->begin) * sizeof(PlanEntry), cudaMemcpyDeviceToHost, copy_stream_);
    if (e == cudaSuccess) e = cudaEventRecord(plan_events_[part->event], copy_stream_);
    return e;
  }

  Status WaitPlan(uint64_t k, uint64_t* ready) override {
    if (k >= plan_count_) return Status::InvalidArgument("gpu: plan: position past the plan");
    cudaEvent_t event = nullptr;
    {
      std::lock_guard<std::mutex> l(plan_mu_);  // planner threads queue parts (block plan)
      // The part holding k: the last one beginning at or before it (the
      // parts cover [0, plan_count_) without gaps).
      auto it = std::upper_bound(plan_parts_.begin(), plan_parts_.end(), k,
                                 [](uint64_t pos, const PlanPart& p) { return pos < p.begin; });
      if (it == plan_parts_.begin()) {
        return Status::Aborted("gpu: plan: no part holds the position");
      }
      --it;
      if (!it->queued && plan_device_ == nullptr) {
        return Status::Aborted("gpu: plan: the plan entries were released");
      }
      if (!it->queued) {
        // A block plan's: this part and the rest of k's range, in order,
        // since the planner goes on entry by entry from here (docs/GPU.md,
        // "Block plan").
        const uint64_t range_end = *std::upper_bound(plan_ranges_.begin(), plan_ranges_.end(), k);
        for (auto p = it; p != plan_parts_.end() && p->begin < range_end; ++p) {
          if (p->queued) continue;
          const cudaError_t e = QueuePlanPart(plan_device_, &*p);
          if (e != cudaSuccess) return CudaFailure("plan", e);
        }
      }
      event = plan_events_[it->event];
      *ready = it->end;
    }
    const cudaError_t e = cudaEventSynchronize(event);
    if (e != cudaSuccess) return CudaFailure("plan", e);
    return Status::OK();
  }

  void ReleasePlan() override { FreePlanDevice(); }

  // The output tables of each subcompaction range (plan_ranges_) by the
  // split rule (split_common.h; docs/GPU.md, "Table splits"): their first
  // entries into *starts, ascending. Each round searches one window per
  // range with a table open, from the table's first entry: the sums of
  // each table's blocks before each block (SplitSums, then
  // cub::DeviceScan::ExclusiveScanByKey by window), then a thread per
  // block finds the first split in it (FirstSplitKernel; the least one per
  // window wins). The first round takes each whole range with the blocks
  // BlockRuns cut for it (d_runs, num_runs: RunSplitSumsKernel); a later
  // one cuts its windows' blocks itself (CutSplitBlocks). A window ending
  // in a split opens the next table there, over twice the range's previous
  // table's entries, at least in.split_window; one that found none covers
  // its range's end (the last table) or doubles. A round waits once for
  // the splits, and a later one once more for its block count, spinning
  // (SpinWait).
  Status SplitTables(const KeySortInput& in, const PlanEntry* d_plan, const uint8_t* d_key_arena,
                     uint64_t k, const BlockRun* d_runs, uint64_t num_runs,
                     std::vector<uint64_t>* starts) {
    starts->clear();
    if (!in.SplitInputsOk()) {
      return Status::InvalidArgument("gpu: split: no split rule or grandparent bytes");
    }
    if (k == 0) return Status::OK();
    JobAllocations mem(stream_);
    uint64_t* d_gp = nullptr;
    ACCELKV_CUDA_TRY("plan", mem.Alloc(&d_gp, in.grandparent_bytes.size()));
    ACCELKV_CUDA_TRY("plan",
                     Upload(d_gp, in.grandparent_bytes.data(), in.grandparent_bytes.size() * 8));
    uint64_t* d_prefix = nullptr;  // the nominal sizes' exclusive sum, for a second round
    struct Open {
      uint64_t start;  // the open table's first entry
      uint64_t range_end;
      uint64_t window;  // entries searched from start
    };
    std::vector<Open> open;
    for (size_t r = 0; r + 1 < plan_ranges_.size(); ++r) {
      const uint64_t begin = plan_ranges_[r];
      const uint64_t end = plan_ranges_[r + 1];
      if (begin < end) {
        open.push_back(Open{begin, end, end - begin});
        starts->push_back(begin);
      }
    }
    for (bool first = true; !open.empty(); first = false) {
      const auto nw = static_cast<uint32_t>(open.size());
      uint8_t* host = nullptr;
      Status s = split_io_.Get(uint64_t{nw} * 32, "plan", &host);
      if (!s.ok()) return s;
      auto* windows = reinterpret_cast<uint64_t*>(host);  // 3 per window
      auto* splits = windows + 3 * uint64_t{nw};          // 1 per window
      for (uint32_t w = 0; w < nw; ++w) {
        windows[3 * w] = open[w].start;
        windows[3 * w + 1] = std::min(open[w].range_end, open[w].start + open[w].window);
        windows[3 * w + 2] = open[w].range_end;
      }
      if (!first && d_prefix == nullptr) {
        s = NominalPrefix(d_plan, k, &mem, &d_prefix);
        if (!s.ok()) return s;
      }
      JobAllocations round(stream_);
      SplitRoundBlocks blocks;
      uint64_t* d_windows = nullptr;
      ACCELKV_CUDA_TRY("plan", round.Alloc(&d_windows, 4 * uint64_t{nw}));
      ACCELKV_CUDA_TRY("plan", Upload(d_windows, host, uint64_t{nw} * 24));
      if (first) {
        s = RunSplitBlocks(d_plan, d_key_arena, d_runs, num_runs, d_windows, nw, &round, &blocks);
      } else {
        s = CutSplitBlocks(d_plan, d_key_arena, d_prefix, plan_block_size_, open.front().start,
                           windows[3 * (nw - 1) + 1], d_windows, nw, &round, &blocks);
      }
      if (!s.ok()) return s;
      auto* d_splits = reinterpret_cast<unsigned long long*>(d_windows + 3 * uint64_t{nw});
      s = FindSplits(d_plan, d_key_arena, blocks, in.split, d_gp, d_splits, nw, &round);
      if (!s.ok()) return s;
      ACCELKV_CUDA_TRY("plan", cudaMemcpyAsync(splits, d_splits, uint64_t{nw} * 8,
                                               cudaMemcpyDeviceToHost, stream_));
      ACCELKV_CUDA_TRY("plan", SpinWait());
      std::vector<Open> next;
      for (uint32_t w = 0; w < nw; ++w) {
        Open o = open[w];
        const uint64_t window_end = windows[3 * w + 1];
        if (splits[w] != ~uint64_t{0}) {
          if (splits[w] <= o.start || splits[w] > window_end || splits[w] >= o.range_end) {
            return Status::Corruption("gpu: split: a split outside its window");
          }
          starts->push_back(splits[w]);
          o.window = std::max<uint64_t>({2 * (splits[w] - o.start), in.split_window, 1});
          o.start = splits[w];
          next.push_back(o);
        } else if (window_end < o.range_end) {
          o.window *= 2;
          next.push_back(o);
        }
      }
      open.swap(next);
    }
    std::sort(starts->begin(), starts->end());
    return Status::OK();
  }

  // One split round's blocks on the device (from a round's allocations):
  // each block, its table's sums over it, its window.
  struct SplitRoundBlocks {
    SplitBlock* blocks = nullptr;
    SplitSums* sums = nullptr;
    uint32_t* keys = nullptr;
    uint64_t n = 0;
  };

  // The nominal sizes' exclusive sum over the k plan entries (CUB), into
  // *d_prefix from mem.
  Status NominalPrefix(const PlanEntry* d_plan, uint64_t k, JobAllocations* mem,
                       uint64_t** d_prefix) {
    uint64_t* d_sizes = nullptr;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_sizes, k));
    ACCELKV_CUDA_TRY("plan", mem->Alloc(d_prefix, k));
    const auto items = static_cast<int64_t>(k);
    size_t temp = 0;
    ACCELKV_CUDA_TRY(
        "plan", cub::DeviceScan::ExclusiveSum(nullptr, temp, d_sizes, *d_prefix, items, stream_));
    uint8_t* d_temp = nullptr;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_temp, temp));
    NominalSizesKernel<<<Grid(k), kThreads, 0, stream_>>>(d_plan, k, d_sizes);
    ACCELKV_CUDA_TRY("plan", cudaGetLastError());
    ACCELKV_CUDA_TRY(
        "plan", cub::DeviceScan::ExclusiveSum(d_temp, temp, d_sizes, *d_prefix, items, stream_));
    return Status::OK();
  }

  // The first round's blocks: BlockRuns' records, each range one window.
  Status RunSplitBlocks(const PlanEntry* d_plan, const uint8_t* d_key_arena, const BlockRun* d_runs,
                        uint64_t num_runs, const uint64_t* d_windows, uint32_t nw,
                        JobAllocations* mem, SplitRoundBlocks* out) {
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&out->blocks, num_runs));
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&out->sums, num_runs));
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&out->keys, num_runs));
    out->n = num_runs;
    if (num_runs == 0) return Status::OK();
    RunSplitSumsKernel<<<Grid(num_runs), kThreads, 0, stream_>>>(
        d_plan, d_key_arena, d_runs, num_runs, d_windows, nw, out->blocks, out->sums, out->keys);
    ACCELKV_CUDA_TRY("plan", cudaGetLastError());
    return Status::OK();
  }

  // A later round's blocks: the windows' entries [lo, hi) cut from each
  // window's start (SplitBlockStartsKernel, an exclusive sum numbering the
  // starts, a wait for their count, SplitBlocksKernel).
  Status CutSplitBlocks(const PlanEntry* d_plan, const uint8_t* d_key_arena,
                        const uint64_t* d_prefix, uint64_t block_size, uint64_t lo, uint64_t hi,
                        const uint64_t* d_windows, uint32_t nw, JobAllocations* mem,
                        SplitRoundBlocks* out) {
    const uint64_t n = hi - lo;
    uint32_t* d_flags = nullptr;
    uint32_t* d_ids = nullptr;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_flags, n));
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_ids, n));
    size_t temp = 0;
    ACCELKV_CUDA_TRY("plan", cub::DeviceScan::ExclusiveSum(nullptr, temp, d_flags, d_ids,
                                                           static_cast<int64_t>(n), stream_));
    uint8_t* d_temp = nullptr;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_temp, temp));
    SplitBlockStartsKernel<<<Grid(n), kThreads, 0, stream_>>>(d_prefix, lo, hi, d_windows, nw,
                                                              block_size, d_flags);
    ACCELKV_CUDA_TRY("plan", cudaGetLastError());
    ACCELKV_CUDA_TRY("plan", cub::DeviceScan::ExclusiveSum(d_temp, temp, d_flags, d_ids,
                                                           static_cast<int64_t>(n), stream_));
    Status s = CountFlags(d_flags, d_ids, n, &out->n);
    if (!s.ok()) return s;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&out->blocks, out->n));
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&out->sums, out->n));
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&out->keys, out->n));
    SplitBlocksKernel<<<Grid(n), kThreads, 0, stream_>>>(d_plan, d_key_arena, lo, hi, d_flags,
                                                         d_ids, d_windows, nw, out->blocks,
                                                         out->sums, out->keys);
    ACCELKV_CUDA_TRY("plan", cudaGetLastError());
    return Status::OK();
  }

  // The least split of each window into d_splits[window] (~0: none): the
  // sums of each block's table before it (ExclusiveScanByKey by window),
  // then FirstSplitKernel.
  Status FindSplits(const PlanEntry* d_plan, const uint8_t* d_key_arena, const SplitRoundBlocks& b,
                    const TableSplitRule& rule, const uint64_t* d_gp, unsigned long long* d_splits,
                    uint32_t nw, JobAllocations* mem) {
    ACCELKV_CUDA_TRY("plan", cudaMemsetAsync(d_splits, 0xff, uint64_t{nw} * 8, stream_));
    if (b.n == 0) return Status::OK();
    SplitSums* d_closed = nullptr;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_closed, b.n));
    const auto blocks = static_cast<int64_t>(b.n);
    size_t temp = 0;
    ACCELKV_CUDA_TRY("plan", cub::DeviceScan::ExclusiveScanByKey(
                                 nullptr, temp, b.keys, b.sums, d_closed, CombineSplitSumsOp{},
                                 EmptySplitSums(), blocks, cuda::std::equal_to<>{}, stream_));
    uint8_t* d_temp = nullptr;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_temp, temp));
    ACCELKV_CUDA_TRY("plan", cub::DeviceScan::ExclusiveScanByKey(
                                 d_temp, temp, b.keys, b.sums, d_closed, CombineSplitSumsOp{},
                                 EmptySplitSums(), blocks, cuda::std::equal_to<>{}, stream_));
    FirstSplitKernel<<<Grid(b.n), kThreads, 0, stream_>>>(d_plan, d_key_arena, b.blocks, d_closed,
                                                          b.keys, b.n, rule, d_gp, d_splits);
    ACCELKV_CUDA_TRY("plan", cudaGetLastError());
    return Status::OK();
  }

  // The blocks of the k plan entries d_plan cut at range[0], range[1], ...
  // (ascending, from 0 to k), each cut a table's first entry: the nominal
  // sizes' exclusive sum (CUB), the block starts (StartsBlock), their
  // indices (CUB exclusive sum), then a record per block (MakeBlockRun,
  // positions in d_plan), copied back into *dst before it returns: *runs,
  // *n of them; *d_runs_out: the records on the device (from mem; the
  // temporaries are freed before it returns). Uses
  // stream_, run_count_ and spin_event_ (Run's).
  Status BlockRuns(uint64_t block_size, const PlanEntry* d_plan, uint64_t k,
                   const std::vector<uint64_t>& range, JobAllocations* mem, PinnedBuffer* dst,
                   const BlockRun** runs, uint64_t* n, const BlockRun** d_runs_out) {
    *runs = nullptr;
    *n = 0;
    *d_runs_out = nullptr;
    if (k == 0) return Status::OK();
    const auto ranges = static_cast<uint32_t>(range.size() - 1);
    const auto items = static_cast<int64_t>(k);
    JobAllocations temp(stream_);  // freed on return: the records alone outlive it
    uint64_t* d_range = nullptr;
    uint64_t* d_sizes = nullptr;
    uint64_t* d_prefix = nullptr;
    uint32_t* d_flags = nullptr;
    uint32_t* d_ids = nullptr;
    ACCELKV_CUDA_TRY("plan", temp.Alloc(&d_range, range.size()));
    ACCELKV_CUDA_TRY("plan", temp.Alloc(&d_sizes, k));
    ACCELKV_CUDA_TRY("plan", temp.Alloc(&d_prefix, k));
    ACCELKV_CUDA_TRY("plan", temp.Alloc(&d_flags, k));
    ACCELKV_CUDA_TRY("plan", temp.Alloc(&d_ids, k));
    size_t temp64 = 0;
    size_t temp32 = 0;
    ACCELKV_CUDA_TRY(
        "plan", cub::DeviceScan::ExclusiveSum(nullptr, temp64, d_sizes, d_prefix, items, stream_));
    ACCELKV_CUDA_TRY(
        "plan", cub::DeviceScan::ExclusiveSum(nullptr, temp32, d_flags, d_ids, items, stream_));
    uint8_t* d_temp = nullptr;
    ACCELKV_CUDA_TRY("plan", temp.Alloc(&d_temp, std::max(temp64, temp32)));
    ACCELKV_CUDA_TRY("plan", Upload(d_range, range.data(), range.size() * 8));
    NominalSizesKernel<<<Grid(k), kThreads, 0, stream_>>>(d_plan, k, d_sizes);
    ACCELKV_CUDA_TRY("plan", cudaGetLastError());
    ACCELKV_CUDA_TRY(
        "plan", cub::DeviceScan::ExclusiveSum(d_temp, temp64, d_sizes, d_prefix, items, stream_));
    BlockStartsKernel<<<Grid(k), kThreads, 0, stream_>>>(d_prefix, k, d_range, ranges, block_size,
                                                         d_flags);
    ACCELKV_CUDA_TRY("plan", cudaGetLastError());
    ACCELKV_CUDA_TRY("plan",
                     cub::DeviceScan::ExclusiveSum(d_temp, temp32, d_flags, d_ids, items, stream_));
    uint64_t count = 0;
    Status s = CountFlags(d_flags, d_ids, k, &count);
    if (!s.ok()) return s;
    BlockRun* d_runs = nullptr;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_runs, count));
    BlockRunsKernel<<<Grid(k), kThreads, 0, stream_>>>(d_plan, k, d_flags, d_ids, d_runs);
    ACCELKV_CUDA_TRY("plan", cudaGetLastError());
    MarkDevice(kRunsKernelEnd, stream_);
    uint8_t* host_runs = nullptr;
    s = dst->Get(count * sizeof(BlockRun), "plan", &host_runs);
    if (!s.ok()) return s;
    ACCELKV_CUDA_TRY("plan", cudaMemcpyAsync(host_runs, d_runs, count * sizeof(BlockRun),
                                             cudaMemcpyDeviceToHost, stream_));
    MarkDevice(kRunsCopied, stream_);
    ACCELKV_CUDA_TRY("plan", SpinWait());
    *runs = reinterpret_cast<const BlockRun*>(host_runs);
    *n = count;
    *d_runs_out = d_runs;
    return Status::OK();
  }

  // The count of the n > 0 flags on stream_, from their exclusive sum ids:
  // the last id plus the last flag, waited for (SpinWait).
  Status CountFlags(const uint32_t* d_flags, const uint32_t* d_ids, uint64_t n, uint64_t* count) {
    uint8_t* host_count = nullptr;  // the last entry's index and flag
    Status s = run_count_.Get(8, "plan", &host_count);
    if (!s.ok()) return s;
    ACCELKV_CUDA_TRY(
        "plan", cudaMemcpyAsync(host_count, d_ids + (n - 1), 4, cudaMemcpyDeviceToHost, stream_));
    ACCELKV_CUDA_TRY("plan", cudaMemcpyAsync(host_count + 4, d_flags + (n - 1), 4,
                                             cudaMemcpyDeviceToHost, stream_));
    ACCELKV_CUDA_TRY("plan", SpinWait());
    uint32_t last_id = 0;
    uint32_t last_flag = 0;
    std::memcpy(&last_id, host_count, 4);
    std::memcpy(&last_flag, host_count + 4, 4);
    *count = uint64_t{last_id} + last_flag;
    return Status::OK();
  }

  // Waits for event ev (WaitDevice: polls, naps, then sleeps on it,
  // cudaEventBlockingSync). With every wait spinning a 4 KiB-value job ran
  // 7-10% faster than with each sleeping at once, polling first 3-8%
  // (bench/results/2026-11-28-h200-queue-ahead.md).
  cudaError_t WaitEvent(cudaEvent_t ev) {
    return WaitDevice([ev] { return cudaEventQuery(ev); },
                      [ev] { return cudaEventSynchronize(ev); });
  }

  // Waits for stream_ by spinning on spin_event_ (made without
  // cudaEventBlockingSync): BlockRuns' and SplitTables' waits are short (a
  // few kernels, a small copy), and a thread that sleeps in them waits for
  // a core again on a loaded machine (docs/GPU.md, "Block plan"). Folding
  // it into SyncStream (poll, nap, sleep) measured 0.96x and 1.00x in the
  // database beside 15 busy threads, p99 2-6% higher: not taken
  // (bench/results/2026-11-28-h200-middle-waits.md).
  cudaError_t SpinWait() {
    if (spin_event_ == nullptr) {
      const cudaError_t e = cudaEventCreateWithFlags(&spin_event_, cudaEventDisableTiming);
      if (e != cudaSuccess) return e;
    }
    const cudaError_t e = cudaEventRecord(spin_event_, stream_);
    return e == cudaSuccess ? cudaEventSynchronize(spin_event_) : e;
  }

  // Frees a block plan's device plan entries (plan_device_), after the
  // copies from it.
  void FreePlanDevice() {
    if (plan_device_ == nullptr) return;
    DrainCopiesBack();
    cudaFreeAsync(plan_device_, stream_);
    plan_device_ = nullptr;
  }

  // The verify stream (RunStages), made on first use.
  cudaError_t EnsureVerifyStream() {
    if (verify_stream_ != nullptr) return cudaSuccess;
    return cudaStreamCreateWithFlags(&verify_stream_, cudaStreamNonBlocking);
  }

  // The copy stream and the events that order its copies after kernels on
  // stream_ (the decoded keys': keys_event_; the encode's: kEncodeParts for
  // the parts, one for the filters), made on first use.
  cudaError_t EnsureCopyStream() {
    if (copy_stream_ != nullptr) return cudaSuccess;
    if (keys_event_ == nullptr) {
      const cudaError_t err = cudaEventCreateWithFlags(&keys_event_, cudaEventDisableTiming);
      if (err != cudaSuccess) return err;
    }
    for (cudaEvent_t& e : encode_events_) {
      if (e != nullptr) continue;
      const cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
      if (err != cudaSuccess) return err;
    }
    return cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking);
  }

  // chunk_events_[c] and near_events_[c], made on first use and kept. The
  // host waits on them (WaitEvent), asleep for the most part, leaving its
  // core to the writers. With the timeline on, also the chunk's timing
  // events (first part, encoded, back).
  cudaError_t EnsureChunkEvent(size_t c) {
    const unsigned int flags =
        cudaEventDisableTiming | (BlockingWaits() ? cudaEventBlockingSync : 0u);
    cudaError_t e = GrowEvents(&chunk_events_, c + 1, flags);
    if (e == cudaSuccess) e = GrowEvents(&near_events_, c + 1, flags);
    if (e == cudaSuccess && timeline_) {
      e = GrowEvents(&timeline_events_, 3 * (c + 1), cudaEventDefault);
    }
    return e;
  }

  // The huge blocks of a part (list, grid of tbs thread blocks; block
  // indices into part_blocks) on stream_: their bytes, then their checksums
  // once every byte is written, then the checksums stored.
  cudaError_t EncodeHugeBlocks(const std::vector<HugeBlock>& huge, uint64_t tbs,
                               const EncodeSources& src, const EncodeBlock* part_blocks,
                               JobAllocations* mem) {
    HugeBlock* d_huge = nullptr;
    uint32_t* d_acc = nullptr;
    const auto n = static_cast<uint32_t>(huge.size());
    cudaError_t e = mem->Alloc(&d_huge, n);
    if (e == cudaSuccess) e = mem->Alloc(&d_acc, n);
    if (e == cudaSuccess) {
      e = cudaMemcpyAsync(d_huge, huge.data(), n * sizeof(HugeBlock), cudaMemcpyHostToDevice,
                          stream_);
    }
    if (e == cudaSuccess) e = cudaMemsetAsync(d_acc, 0, n * sizeof(uint32_t), stream_);
    if (e != cudaSuccess) return e;
    const auto grid = static_cast<unsigned int>(tbs);
    EncodeHugeBlocksKernel<<<grid, kThreads, 0, stream_>>>(src, part_blocks, d_huge, n, dev_.out);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    HugeBlocksCrcKernel<<<grid, kThreads, 0, stream_>>>(crc_tables_, part_blocks, d_huge, n,
                                                        dev_.out, d_acc);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    StoreHugeBlocksCrcKernel<<<Grid(n), kThreads, 0, stream_>>>(part_blocks, d_huge, n, d_acc,
                                                                dev_.out);
    return cudaGetLastError();
  }

  // Copies dev_.out's spans (offset, size) back to the chunk's place on
  // the host (ChunkPlace: a lent extent's memory, else output byte x at
  // where.dst + x - where.origin) on copy_stream_ once what stream_ has
  // queued so far ran (event k); spans that follow one another in the list
  // and in memory go in one copy per part of the place. A span outside
  // the place is an invalid value (nothing copied).
  cudaError_t CopyBackAfterKernels(const std::vector<std::pair<uint64_t, uint64_t>>& spans,
                                   uint64_t k, const ChunkPlace& where) {
    for (const auto& [begin, size] : spans) {
      if (!where.Covers(begin, begin + size)) return cudaErrorInvalidValue;
    }
    cudaError_t e = cudaEventRecord(encode_events_[k], stream_);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(copy_stream_, encode_events_[k], 0);
    for (size_t i = 0; i < spans.size() && e == cudaSuccess;) {
      const uint64_t begin = spans[i].first;
      uint64_t end = begin + spans[i].second;
      for (++i; i < spans.size() && spans[i].first == end; ++i) end += spans[i].second;
      where.ForEachPart(begin, end, [&](uint8_t* at, uint64_t from, uint64_t n) {
        if (e == cudaSuccess) {
          e = cudaMemcpyAsync(at, dev_.out + from, n, cudaMemcpyDeviceToHost, copy_stream_);
        }
      });
    }
    return e;
  }

  const cudaStream_t stream_;
  const uint64_t budget_;
  const uint64_t shared_capacity_;
  const std::string name_;
  Crc32cTables* const crc_tables_;  // device memory, owned
  Mailbox* const mailbox_;          // pinned, mapped, owned
  Mailbox* const d_mailbox_;        // the device's pointer to it
  const unsigned int max_blocks_;
  cudaEvent_t events_[5] = {};
  PinnedBuffer arena_;      // the file arena (HostArena)
  PinnedBuffer key_arena_;  // HostKeyArena
  PinnedBuffer out_;        // HostOutput
  PinnedBuffer plan_;       // Run's plan inputs (KeySortOutput::plan)
  Resident dev_;            // AllocInput
  // The host array CheckBlocks copied dev_.check_blocks to, its count and
  // the largest average key (TakeCheckBlocks).
  const DecodeBlock* check_blocks_host_ = nullptr;
  uint64_t check_blocks_count_ = 0;
  uint64_t check_max_key_ = 0;
  HeldInput held_;     // the arenas Run kept for EncodeBlocks
  HeldInput decoded_;  // the arenas DecodeKeys left for Run
  // BeginStaging .. DecodeKeys or CancelStaging: the ranges copied into
  // dev_.arena from staged_arena_, each between a pair of stage_events_.
  StagedArena staged_;
  const uint8_t* staged_arena_ = nullptr;
  std::vector<cudaEvent_t> stage_events_;
  cudaStream_t copy_stream_ = nullptr;    // EncodeStages' and DecodeStages' copies back
  cudaStream_t verify_stream_ = nullptr;  // RunStages' VerifyKernel, beside the sort
  // Key-first jobs (SetKeyFirst, docs/GPU.md "Key-first jobs"): whether
  // the host may read registered memory through its own pointers
  // (cudaDevAttrCanUseHostPointerForRegisteredMem), whether the next
  // staging may go key-first, whether this one stages on stage_stream_
  // (listing its pieces, all page-locked so far), whether this job's check
  // and decode went ahead of the copies, copies on stage_stream_ not yet
  // waited for (bulk_done_: their end), a verify Run left running
  // (verify_events_: its start and end), and the staged copies
  // WaitVerified times.
  const bool host_pointers_;
  bool key_first_allowed_ = false;
  bool side_staging_ = false;
  bool host_pieces_ok_ = true;
  std::vector<HostPiece> host_pieces_;
  bool key_first_ = false;
  cudaStream_t stage_stream_ = nullptr;
  bool bulk_pending_ = false;
  cudaEvent_t bulk_done_ = nullptr;
  bool verify_pending_ = false;
  uint64_t verified_bad_ = ~uint64_t{0};  // the resolved verify's bad block (ResolveVerify)
  cudaEvent_t verify_events_[2] = {};
  uint64_t deferred_stage_copies_ = 0;
  // Staging groups (MarkStaged): the group the next staged piece joins,
  // the event at each earlier group's end, the event after every staged
  // copy (EncodeStages), the kept positions' groups on the host (Run:
  // QueueStagedGroups) and EncodeStages'
  // gate: whether its kernels still wait for staged copies, and the groups
  // [0, gate_waited_) stream_ already waits for.
  static constexpr uint32_t kMaxStageGroups = 255;  // a group is a byte
  uint32_t stage_group_ = 0;
  std::vector<cudaEvent_t> group_events_;
  cudaEvent_t staged_all_ = nullptr;
  PinnedBuffer groups_host_;
  uint8_t* groups_ptr_ = nullptr;  // groups_host_'s bytes
  uint64_t groups_count_ = 0;
  uint64_t stage_delay_us_ = 0;  // ACCELKV_GPU_TEST_STAGE_DELAY_US (BeginStaging)
  uint32_t delayed_group_ = 0;   // the last group held back
  bool gate_open_ = true;
  uint32_t gate_waited_ = 0;
  // Upload's pageable sources while the staged copies run, and the bytes
  // taken of it since ResetUploads.
  static constexpr uint64_t kUploadStagingBytes = uint64_t{1} << 20;
  PinnedBuffer upload_;
  uint64_t upload_used_ = 0;
  const HostUpload upload_fn_ = [this](void* dst, const void* src, uint64_t bytes) {
    return Upload(dst, src, bytes);
  };
  cudaEvent_t encode_events_[kEncodeParts + 1] = {};
  std::vector<cudaEvent_t> chunk_events_;  // each queued chunk's last copy back (EnsureChunkEvent)
  std::vector<cudaEvent_t> near_events_;   // ...and all but its last part's
  // ACCELKV_GPU_TIMELINE=1 (BeginStaging): the origin event and the host's
  // time then; each chunk's first part's kernels', all its kernels' and
  // its copies' ends (3c, 3c + 1, 3c + 2).
  bool timeline_ = false;
  cudaEvent_t timeline_origin_ = nullptr;
  std::chrono::steady_clock::time_point timeline_host_;
  std::vector<cudaEvent_t> timeline_events_;
  // The timeline's marks inside the middle's device calls (MarkDevice).
  enum MidEvent : size_t {
    kCheckUploadEnd,
    kCheckKernelEnd,
    kCheckWriteEnd,
    kRunsKernelEnd,
    kRunsCopied,
    kMidEvents
  };
  static constexpr const char* kMidEventNames[kMidEvents] = {
      "tl_check_upload_end", "tl_check_kernel_end", "tl_check_write_end", "tl_runs_kernel_end",
      "tl_runs_copied"};
  std::vector<cudaEvent_t> mid_events_;
  uint32_t mid_marked_ = 0;           // the mid events recorded since ReportMid
  cudaEvent_t keys_event_ = nullptr;  // DecodeStages: the keys' copies after the kernel
  bool keys_pending_ = false;         // those copies may still run (DrainCopiesBack)
  // PlanStage's copies of the plan back, in parts (QueuePlanCopies), each
  // followed by its event: what WaitPlan waits for.
  struct PlanPart {
    uint64_t begin;
    uint64_t end;
    size_t event;  // index into plan_events_
    bool queued;   // its copy and event are on copy_stream_ (a block plan's: by WaitPlan)
  };
  std::vector<PlanPart> plan_parts_;   // by begin, covering [0, plan_count_)
  std::mutex plan_mu_;                 // WaitPlan's queueing of a block plan's parts
  uint8_t* plan_host_ = nullptr;       // the parts' destination (plan_)
  std::vector<uint64_t> plan_ranges_;  // the subcompaction ranges' starts, then the plan's end
  PlanEntry* plan_device_ = nullptr;   // a block plan's entries, until the next Run or ReleaseInput
  PinnedBuffer plan_runs_;             // a block plan's records (KeySortOutput::runs)
  uint64_t plan_block_size_ = 0;       // the last Run's block plan (0: none)
  PinnedBuffer split_io_;              // SplitTables' windows and splits
  PinnedBuffer run_count_;             // BlockRuns' and CutSplitBlocks' block counts
  cudaEvent_t spin_event_ = nullptr;   // SpinWait's
  std::vector<cudaEvent_t> plan_events_;
  uint64_t plan_count_ = 0;    // the last Run's plan entries (0: none to wait for)
  bool plan_pending_ = false;  // plan parts may still be copied (DrainCopiesBack)
  PinnedBuffer plan_starts_;   // BoundaryStartsKernel's results
};

std::string NoGpu(const char* what, cudaError_t e) {
  return std::string("no GPU: ") + what + ": " + cudaGetErrorString(e);
}

}  // namespace

std::unique_ptr<KeySortDevice> NewCudaKeySortDevice(const GpuExecutorOptions& options,
                                                    std::string* reason) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    *reason = NoGpu("cudaGetDeviceCount", e);
    cudaGetLastError();
    return nullptr;
  }
  if (count == 0) {
    *reason = "no GPU: no CUDA device present";
    return nullptr;
  }
  if ((e = cudaSetDevice(0)) != cudaSuccess) {
    *reason = NoGpu("cudaSetDevice", e);
    return nullptr;
  }
  // Block instead of spinning while waiting for the GPU: the CPU is what we
  // are saving (ACCELKV_GPU_WAIT=spin|yield, for measurements); map pinned
  // host memory (the mailbox). Fails harmlessly when the context already
  // exists (64-bit UVA maps pinned memory anyway).
  const unsigned int schedule = BlockingWaits()        ? cudaDeviceScheduleBlockingSync
                                : WaitMode() == "spin" ? cudaDeviceScheduleSpin
                                                       : cudaDeviceScheduleYield;
  cudaSetDeviceFlags(schedule | cudaDeviceMapHost);
  cudaGetLastError();
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  if ((e = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess) {
    *reason = NoGpu("cudaMemGetInfo", e);
    return nullptr;
  }
  cudaMemPool_t pool;
  if ((e = cudaDeviceGetDefaultMemPool(&pool, 0)) != cudaSuccess) {
    *reason = NoGpu("cudaDeviceGetDefaultMemPool", e);
    return nullptr;
  }
  uint64_t keep = std::numeric_limits<uint64_t>::max();
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  cudaStream_t stream;
  if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
    *reason = NoGpu("cudaStreamCreate", e);
    return nullptr;
  }
  cudaDeviceProp prop;
  std::string name = "cuda";
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) name = std::string("cuda:") + prop.name;
  uint64_t budget =
      static_cast<uint64_t>(static_cast<double>(free_bytes) * options.device_memory_fraction);
  if (options.device_memory_limit != 0) budget = std::min(budget, options.device_memory_limit);
  // The CRC32C tables, made once on the host and kept on the device.
  Crc32cTables host_tables;
  InitCrc32cTables(&host_tables);
  Crc32cTables* crc_tables = nullptr;
  if ((e = cudaMalloc(&crc_tables, sizeof(Crc32cTables))) != cudaSuccess ||
      (e = cudaMemcpy(crc_tables, &host_tables, sizeof(Crc32cTables), cudaMemcpyHostToDevice)) !=
          cudaSuccess) {
    *reason = NoGpu("CRC32C tables", e);
    if (crc_tables != nullptr) cudaFree(crc_tables);
    cudaStreamDestroy(stream);
    return nullptr;
  }
  // The mailbox (see Mailbox), made here so that no job can fail for it.
  void* mailbox = nullptr;
  void* d_mailbox = nullptr;
  if ((e = cudaHostAlloc(&mailbox, sizeof(Mailbox), cudaHostAllocMapped)) != cudaSuccess ||
      (e = cudaHostGetDevicePointer(&d_mailbox, mailbox, 0)) != cudaSuccess) {
    *reason = NoGpu("mailbox", e);
    if (mailbox != nullptr) cudaFreeHost(mailbox);
    cudaFree(crc_tables);
    cudaStreamDestroy(stream);
    return nullptr;
  }
  int sms = 0;
  int per_sm = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, EncodeBlocksKernel, kThreads, 0);
  const unsigned int max_blocks = static_cast<unsigned int>(std::max(1, sms) * std::max(1, per_sm));
  cudaGetLastError();
  SetPinnedHostMemory(PinnedHostMemory{&PinnedAllocate, &PinnedFree});
  // What the process's executors may hold at once on this device: the most
  // one job may be given (device_memory_fraction is clamped to 0.95) of
  // the memory free now (DeviceMemoryLedger keeps the largest of these
  // that any of the process's executors saw).
  const uint64_t shared_capacity = static_cast<uint64_t>(static_cast<double>(free_bytes) * 0.95);
  // Key-first jobs read staged host memory in place through its host
  // pointers (cudaHostAlloc's always, cudaHostRegister's where this holds).
  int host_pointers = 0;
  cudaDeviceGetAttribute(&host_pointers, cudaDevAttrCanUseHostPointerForRegisteredMem, 0);
  cudaGetLastError();
  return std::make_unique<CudaKeySortDevice>(
      stream, budget, shared_capacity, name, crc_tables, static_cast<Mailbox*>(mailbox),
      static_cast<Mailbox*>(d_mailbox), max_blocks, host_pointers != 0);
}

}  // namespace gpu
}  // namespace accelkv
