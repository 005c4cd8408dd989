// CudaKeySortDevice: the CUDA KeySortDevice (see key_sort_device.h).
//
// One job, all on one stream:
//   copy_in  arena + block spans + per-entry key offsets/sizes/flags + snapshots
//   verify   VerifyKernel: one thread per block, byte-wise CRC32C with the
//            table in shared memory; the lowest bad block index via atomicMin
//   sort     MakeItemsKernel (8-byte big-endian key prefix + entry index),
//            then cub::DeviceMergeSort::SortKeys with the full internal-key
//            comparison on prefix ties (inputs are sorted runs; merge sort
//            handles keys of any length without padding)
//   dedup    DedupKernel: ObsoleteVersionFilter's rule per entry and its
//            predecessor (+ duplicate internal-key detection), then
//            cub::DeviceSelect::Flagged to compact the kept entry indices
//   copy_out the counters, then the kept indices
// and, in device-encode mode (EncodeBlocks, after the CPU planned the
// output): the arena and the plan in, EncodeEntriesKernel (a warp per entry
// copies key and value and writes its offset slots), FinishBlocksKernel (a
// thread per block: closing slots, count, trailer CRC32C), the blocks out.
// Device memory comes from the stream-ordered default pool with its release
// threshold raised, so it is reused across jobs; the pinned host arena grows
// and is reused. Every CUDA error becomes Aborted("gpu: <stage>: ...").
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_select.cuh>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gpu/key_sort_device.h"

namespace accelkv {
namespace gpu {

namespace {

constexpr int kThreads = 256;

struct Counters {
  unsigned long long bad_block;  // ~0: none
  unsigned long long num_kept;
  unsigned int duplicate;
};

__global__ void VerifyKernel(const uint8_t* arena, const BlockSpan* blocks, uint64_t n,
                             Counters* counters) {
  __shared__ uint32_t table[256];
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) table[i] = Crc32cTableEntry(i);
  __syncthreads();
  const uint64_t b = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (b < n && !BlockChecksumOk(table, arena, blocks[b])) {
    atomicMin(&counters->bad_block, static_cast<unsigned long long>(b));
  }
}

__global__ void MakeItemsKernel(KeyArrays keys, uint64_t n, SortItem* items) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < n) items[i] = keys.MakeItem(static_cast<uint32_t>(i));
}

__global__ void DedupKernel(KeyArrays keys, const uint8_t* flags, const SortItem* sorted,
                            uint64_t n, const uint64_t* snapshots, uint32_t num_snapshots,
                            uint8_t* keep, uint32_t* index, Counters* counters) {
  const uint64_t pos = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (pos >= n) return;
  index[pos] = sorted[pos].index;
  keep[pos] = KeepSortedEntry(keys, flags, sorted, pos, snapshots, num_snapshots) ? 1 : 0;
  if (pos > 0) {
    const uint32_t a = sorted[pos - 1].index;
    const uint32_t b = sorted[pos].index;
    if (keys.CompareUserKeys(a, b) == 0 && keys.trailer(a) == keys.trailer(b)) {
      atomicExch(&counters->duplicate, 1u);
    }
  }
}

// One warp per entry: the lanes copy the key and the value bytes, lane 0
// writes the entry's two offset slots.
__global__ void EncodeEntriesKernel(const uint8_t* arena, const EncodeEntry* entries, uint64_t n,
                                    const EncodeBlock* blocks, uint8_t* out) {
  const uint64_t warp = (blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) / 32;
  const uint32_t lane = threadIdx.x & 31u;
  if (warp >= n) return;
  const EncodeEntry e = entries[warp];
  const EncodeBlock b = blocks[e.block];
  uint8_t* dst = out + b.out_offset;
  for (uint32_t k = lane; k < e.key_size; k += 32) dst[e.key_dst + k] = arena[e.key_src + k];
  for (uint32_t k = lane; k < e.value_size; k += 32) dst[e.value_dst + k] = arena[e.value_src + k];
  if (lane == 0) WriteEntrySlots(out, b, e);
}

// One thread per block, after every entry is in place: closing slots, entry
// count, trailer type byte and masked CRC32C.
__global__ void FinishBlocksKernel(const EncodeBlock* blocks, uint64_t n, uint8_t* out) {
  __shared__ uint32_t table[256];
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) table[i] = Crc32cTableEntry(i);
  __syncthreads();
  const uint64_t b = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (b >= n) return;
  WriteBlockTail(out, blocks[b]);
  WriteBlockCrc(table, out, blocks[b]);
}

struct LessOp {
  KeyArrays keys;
  __host__ __device__ bool operator()(const SortItem& a, const SortItem& b) const {
    return keys.Less(a, b);
  }
};

unsigned int Grid(uint64_t n) { return static_cast<unsigned int>((n + kThreads - 1) / kThreads); }

Status CudaFailure(const char* stage, cudaError_t e) {
  return Status::Aborted(std::string("gpu: ") + stage + ": " + cudaGetErrorName(e),
                         cudaGetErrorString(e));
}

#define ACCELKV_CUDA_TRY(stage, expr)                         \
  do {                                                        \
    const cudaError_t err_ = (expr);                          \
    if (err_ != cudaSuccess) return CudaFailure(stage, err_); \
  } while (0)

// Stream-ordered allocations of one job, freed (and the stream drained) on
// every exit path, so the host arena is never reused under a live copy.
class JobAllocations {
 public:
  explicit JobAllocations(cudaStream_t stream) : stream_(stream) {}
  ~JobAllocations() {
    for (void* p : ptrs_) cudaFreeAsync(p, stream_);
    cudaStreamSynchronize(stream_);
    cudaGetLastError();  // a failed job's error is reported by Run
  }
  template <typename T>
  cudaError_t Alloc(T** p, uint64_t count) {
    void* raw = nullptr;
    const uint64_t bytes = count == 0 ? 1 : count * sizeof(T);
    const cudaError_t e = cudaMallocAsync(&raw, bytes, stream_);
    if (e == cudaSuccess) ptrs_.push_back(raw);
    *p = static_cast<T*>(raw);
    return e;
  }

 private:
  const cudaStream_t stream_;
  std::vector<void*> ptrs_;
};

class CudaKeySortDevice final : public KeySortDevice {
 public:
  CudaKeySortDevice(cudaStream_t stream, uint64_t budget, std::string name)
      : stream_(stream), budget_(budget), name_(std::move(name)) {
    for (cudaEvent_t& e : events_) cudaEventCreate(&e);
  }
  ~CudaKeySortDevice() override {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    if (arena_ != nullptr) cudaFreeHost(arena_);
    if (out_ != nullptr) cudaFreeHost(out_);
    if (counters_ != nullptr) cudaFreeHost(counters_);
    cudaStreamDestroy(stream_);
  }

  const char* Name() const override { return name_.c_str(); }
  uint64_t MemoryBudget() const override { return budget_; }

  Status HostArena(uint64_t bytes, uint8_t** arena) override {
    if (bytes > capacity_) {
      if (arena_ != nullptr) cudaFreeHost(arena_);
      arena_ = nullptr;
      capacity_ = 0;
      void* p = nullptr;
      ACCELKV_CUDA_TRY("alloc", cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
      arena_ = static_cast<uint8_t*>(p);
      capacity_ = bytes;
    }
    *arena = arena_;
    return Status::OK();
  }

  Status HostOutput(uint64_t bytes, uint8_t** out) override {
    if (bytes > out_capacity_) {
      if (out_ != nullptr) cudaFreeHost(out_);
      out_ = nullptr;
      out_capacity_ = 0;
      void* p = nullptr;
      ACCELKV_CUDA_TRY("encode",
                       cudaHostAlloc(&p, std::max<uint64_t>(bytes, 1), cudaHostAllocDefault));
      out_ = static_cast<uint8_t*>(p);
      out_capacity_ = bytes;
    }
    *out = out_;
    return Status::OK();
  }

  Status EncodeBlocks(const EncodeJob& job, uint8_t* out,
                      std::map<std::string, uint64_t>* stage_micros) override {
    cudaGetLastError();
    if (InjectedFailure() == GpuStage::kEncode) return Injected(GpuStage::kEncode);
    const auto t0 = std::chrono::steady_clock::now();
    JobAllocations mem(stream_);
    const uint64_t n = job.entries.size();
    const uint64_t nb = job.blocks.size();
    uint8_t* d_arena = nullptr;
    EncodeEntry* d_entries = nullptr;
    EncodeBlock* d_blocks = nullptr;
    uint8_t* d_out = nullptr;
    ACCELKV_CUDA_TRY("encode", mem.Alloc(&d_arena, job.arena_size));
    ACCELKV_CUDA_TRY("encode", mem.Alloc(&d_entries, n));
    ACCELKV_CUDA_TRY("encode", mem.Alloc(&d_blocks, nb));
    ACCELKV_CUDA_TRY("encode", mem.Alloc(&d_out, job.out_size));
    ACCELKV_CUDA_TRY("encode", cudaMemcpyAsync(d_arena, job.arena, job.arena_size,
                                               cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("encode",
                     cudaMemcpyAsync(d_entries, job.entries.data(), n * sizeof(EncodeEntry),
                                     cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("encode",
                     cudaMemcpyAsync(d_blocks, job.blocks.data(), nb * sizeof(EncodeBlock),
                                     cudaMemcpyHostToDevice, stream_));
    if (n > 0) {
      EncodeEntriesKernel<<<Grid(n * 32), kThreads, 0, stream_>>>(d_arena, d_entries, n, d_blocks,
                                                                  d_out);
      ACCELKV_CUDA_TRY("encode", cudaGetLastError());
    }
    if (nb > 0) {
      FinishBlocksKernel<<<Grid(nb), kThreads, 0, stream_>>>(d_blocks, nb, d_out);
      ACCELKV_CUDA_TRY("encode", cudaGetLastError());
    }
    ACCELKV_CUDA_TRY("encode",
                     cudaMemcpyAsync(out, d_out, job.out_size, cudaMemcpyDeviceToHost, stream_));
    ACCELKV_CUDA_TRY("encode", cudaStreamSynchronize(stream_));
    (*stage_micros)["gpu_encode"] += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
            .count());
    return Status::OK();
  }

  Status Run(const KeySortInput& in, KeySortOutput* out,
             std::map<std::string, uint64_t>* stage_micros) override {
    cudaGetLastError();  // clear a non-sticky error left by an earlier job
    if (counters_ == nullptr) {
      void* p = nullptr;
      ACCELKV_CUDA_TRY("alloc", cudaHostAlloc(&p, sizeof(Counters), cudaHostAllocDefault));
      counters_ = static_cast<Counters*>(p);
    }
    JobAllocations mem(stream_);
    const Status s = RunStages(in, out, stage_micros, &mem);
    return s;
  }

 private:
  static Status Injected(GpuStage stage) {
    return Status::Aborted("gpu: injected failure at", GpuStageName(stage));
  }

  Status RunStages(const KeySortInput& in, KeySortOutput* out,
                   std::map<std::string, uint64_t>* stage_micros, JobAllocations* mem) {
    const GpuStage fail = InjectedFailure();
    const uint64_t n = in.num_entries();
    const uint64_t nb = in.blocks.size();
    const uint32_t ns = static_cast<uint32_t>(in.snapshots.size());

    // alloc
    if (fail == GpuStage::kAlloc) return Injected(fail);
    uint8_t* d_arena = nullptr;
    BlockSpan* d_blocks = nullptr;
    uint64_t* d_key_offset = nullptr;
    uint32_t* d_key_size = nullptr;
    uint8_t* d_flags = nullptr;
    uint64_t* d_snapshots = nullptr;
    SortItem* d_items = nullptr;
    uint8_t* d_keep = nullptr;
    uint32_t* d_index = nullptr;
    uint32_t* d_kept = nullptr;
    Counters* d_counters = nullptr;
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_arena, in.arena_size));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_blocks, nb));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_key_offset, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_key_size, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_flags, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_snapshots, ns));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_items, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_keep, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_index, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_kept, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_counters, 1));
    const KeyArrays keys{d_arena, d_key_offset, d_key_size};
    size_t sort_temp = 0;
    size_t select_temp = 0;
    ACCELKV_CUDA_TRY(
        "alloc", cub::DeviceMergeSort::SortKeys(nullptr, sort_temp, d_items,
                                                static_cast<int64_t>(n), LessOp{keys}, stream_));
    ACCELKV_CUDA_TRY("alloc", cub::DeviceSelect::Flagged(nullptr, select_temp, d_index, d_keep,
                                                         d_kept, &d_counters->num_kept,
                                                         static_cast<int64_t>(n), stream_));
    uint8_t* d_temp = nullptr;
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_temp, std::max(sort_temp, select_temp)));

    // copy_in
    if (fail == GpuStage::kCopyIn) return Injected(fail);
    ACCELKV_CUDA_TRY("copy_in", cudaEventRecord(events_[0], stream_));
    ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_arena, in.arena, in.arena_size,
                                                cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_blocks, in.blocks.data(), nb * sizeof(BlockSpan),
                                                cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_key_offset, in.key_offset.data(), n * 8,
                                                cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_key_size, in.key_size.data(), n * 4,
                                                cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("copy_in",
                     cudaMemcpyAsync(d_flags, in.flags.data(), n, cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_snapshots, in.snapshots.data(), ns * 8,
                                                cudaMemcpyHostToDevice, stream_));
    Counters init{~0ull, 0, 0};
    ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_counters, &init, sizeof(init),
                                                cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("copy_in", cudaEventRecord(events_[1], stream_));

    // verify
    if (fail == GpuStage::kVerify) return Injected(fail);
    if (nb > 0) VerifyKernel<<<Grid(nb), kThreads, 0, stream_>>>(d_arena, d_blocks, nb, d_counters);
    ACCELKV_CUDA_TRY("verify", cudaGetLastError());
    ACCELKV_CUDA_TRY("verify", cudaEventRecord(events_[2], stream_));

    // sort
    if (fail == GpuStage::kSort) return Injected(fail);
    if (n > 0) {
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
                                                     d_keep, d_index, d_counters);
      ACCELKV_CUDA_TRY("dedup", cudaGetLastError());
      ACCELKV_CUDA_TRY("dedup", cub::DeviceSelect::Flagged(d_temp, select_temp, d_index, d_keep,
                                                           d_kept, &d_counters->num_kept,
                                                           static_cast<int64_t>(n), stream_));
    }
    ACCELKV_CUDA_TRY("dedup", cudaEventRecord(events_[4], stream_));

    // copy_out
    if (fail == GpuStage::kCopyOut) return Injected(fail);
    const auto t0 = std::chrono::steady_clock::now();
    ACCELKV_CUDA_TRY("copy_out", cudaMemcpyAsync(counters_, d_counters, sizeof(Counters),
                                                 cudaMemcpyDeviceToHost, stream_));
    ACCELKV_CUDA_TRY("copy_out", cudaStreamSynchronize(stream_));
    const Counters c = *counters_;
    if (c.num_kept > n) return Status::Aborted("gpu: copy_out: kept count out of range");
    out->kept.resize(c.num_kept);
    ACCELKV_CUDA_TRY("copy_out", cudaMemcpyAsync(out->kept.data(), d_kept, c.num_kept * 4,
                                                 cudaMemcpyDeviceToHost, stream_));
    ACCELKV_CUDA_TRY("copy_out", cudaStreamSynchronize(stream_));
    const auto copy_out = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - t0);

    const char* names[4] = {"copy_in", "verify", "sort", "dedup"};
    for (int i = 0; i < 4; ++i) {
      float ms = 0;
      ACCELKV_CUDA_TRY("copy_out", cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
      (*stage_micros)[names[i]] += static_cast<uint64_t>(ms * 1000.0f);
    }
    (*stage_micros)["copy_out"] += static_cast<uint64_t>(copy_out.count());

    if (c.bad_block != ~0ull) {
      out->bad_block = c.bad_block;
      out->kept.clear();
      return Status::Corruption("block checksum mismatch");
    }
    if (c.duplicate != 0) {
      out->kept.clear();
      return Status::Corruption("gpu: compaction input holds a duplicated internal key");
    }
    return Status::OK();
  }

  const cudaStream_t stream_;
  const uint64_t budget_;
  const std::string name_;
  cudaEvent_t events_[5] = {};
  uint8_t* arena_ = nullptr;
  uint8_t* out_ = nullptr;
  uint64_t out_capacity_ = 0;
  uint64_t capacity_ = 0;
  Counters* counters_ = nullptr;
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
  // are saving. Fails harmlessly when the context already exists.
  cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
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
  const uint64_t budget =
      static_cast<uint64_t>(static_cast<double>(free_bytes) * options.device_memory_fraction);
  return std::make_unique<CudaKeySortDevice>(stream, budget, name);
}

}  // namespace gpu
}  // namespace accelkv
