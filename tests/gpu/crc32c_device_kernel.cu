// See crc32c_device_kernel.h.
#include "gpu/crc32c_device_kernel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "gpu/crc32c_device.h"
#include "util/crc32c.h"
#include "util/random.h"

namespace accelkv {
namespace test {

namespace {

using gpu::BlockSpan;
using gpu::Crc32cTables;

constexpr int kThreads = 256;  // 8 warps

// A warp per span (grid-stride over warps): the CRC, the check, and the
// trailer rewritten into out.
__global__ void WarpCrcKernel(const Crc32cTables* g_tables, const uint8_t* arena, uint8_t* out,
                              const BlockSpan* spans, uint64_t n, uint32_t* crc, uint8_t* ok) {
  __shared__ Crc32cTables tables;
  gpu::LoadCrc32cTables(&tables, g_tables, threadIdx.x, blockDim.x);
  __syncthreads();
  const uint32_t lane = threadIdx.x & 31u;
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * (blockDim.x / 32);
  for (uint64_t b = (blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) / 32; b < n;
       b += warps) {
    const BlockSpan s = spans[b];
    const uint32_t c = gpu::WarpCrc32c(tables, arena + s.offset, s.size + 1, lane);
    const bool good = gpu::WarpBlockChecksumOk(tables, arena, s, lane);
    gpu::WarpWriteBlockCrc(tables, out, s.offset, s.size, lane);
    if (lane == 0) {
      crc[b] = c;
      ok[b] = good ? 1 : 0;
    }
  }
}

__global__ void FillTablesKernel(Crc32cTables* t) {
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) gpu::FillCrc32cTables(t, i);
}

// The verify stage's kernel as it was: a thread per block, byte-wise.
__global__ void ThreadVerifyKernel(const uint8_t* arena, const BlockSpan* blocks, uint64_t n,
                                   unsigned long long* bad) {
  __shared__ uint32_t table[256];
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) table[i] = gpu::Crc32cTableEntry(i);
  __syncthreads();
  const uint64_t b = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (b < n && !gpu::BlockChecksumOk(table, arena, blocks[b])) {
    atomicMin(bad, static_cast<unsigned long long>(b));
  }
}

// A warp per block; kFill: each thread block fills its own tables.
template <bool kFill>
__global__ void WarpVerifyKernel(const Crc32cTables* g_tables, const uint8_t* arena,
                                 const BlockSpan* blocks, uint64_t n, unsigned long long* bad) {
  __shared__ Crc32cTables tables;
  if (kFill) {
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) gpu::FillCrc32cTables(&tables, i);
  } else {
    gpu::LoadCrc32cTables(&tables, g_tables, threadIdx.x, blockDim.x);
  }
  __syncthreads();
  const uint32_t lane = threadIdx.x & 31u;
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * (blockDim.x / 32);
  for (uint64_t b = (blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) / 32; b < n;
       b += warps) {
    if (!gpu::WarpBlockChecksumOk(tables, arena, blocks[b], lane) && lane == 0) {
      atomicMin(bad, static_cast<unsigned long long>(b));
    }
  }
}

#define CUDA_TRY(call)                                                       \
  do {                                                                       \
    const cudaError_t err_ = (call);                                         \
    if (err_ != cudaSuccess) {                                               \
      *reason = std::string("cuda: " #call ": ") + cudaGetErrorString(err_); \
      return false;                                                          \
    }                                                                        \
  } while (0)

bool HaveDevice(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    *reason = std::string("no CUDA device: ") +
              (err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0");
    return false;
  }
  return true;
}

// Device memory freed on scope exit.
struct DeviceBuffers {
  std::vector<void*> ptrs;
  ~DeviceBuffers() {
    for (void* p : ptrs) cudaFree(p);
  }
  template <typename T>
  cudaError_t Alloc(T** p, size_t bytes) {
    void* v = nullptr;
    const cudaError_t err = cudaMalloc(&v, std::max<size_t>(bytes, 1));
    if (err == cudaSuccess) ptrs.push_back(v);
    *p = static_cast<T*>(v);
    return err;
  }
};

// The tables made on the host, in device memory.
bool DeviceTables(DeviceBuffers* bufs, Crc32cTables** d_tables, std::string* reason) {
  auto h_tables = std::make_unique<Crc32cTables>();
  gpu::InitCrc32cTables(h_tables.get());
  CUDA_TRY(bufs->Alloc(d_tables, sizeof(Crc32cTables)));
  CUDA_TRY(cudaMemcpy(*d_tables, h_tables.get(), sizeof(Crc32cTables), cudaMemcpyHostToDevice));
  return true;
}

int ResidentGrid(uint64_t n, const void* kernel) {
  int device = 0;
  int sms = 1;
  int per_sm = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0);
  const uint64_t needed = (n + kThreads / 32 - 1) / (kThreads / 32);
  return static_cast<int>(std::max<uint64_t>(
      1, std::min<uint64_t>(needed, static_cast<uint64_t>(sms) * std::max(per_sm, 1))));
}

}  // namespace

bool RunWarpCrcKernels(const std::vector<uint8_t>& arena, const std::vector<BlockSpan>& spans,
                       WarpCrcKernelOutput* out, std::string* reason) {
  if (!HaveDevice(reason)) return false;
  const uint64_t n = spans.size();
  DeviceBuffers bufs;
  Crc32cTables* d_tables = nullptr;
  if (!DeviceTables(&bufs, &d_tables, reason)) return false;
  uint8_t* d_arena = nullptr;
  uint8_t* d_out = nullptr;
  BlockSpan* d_spans = nullptr;
  uint32_t* d_crc = nullptr;
  uint8_t* d_ok = nullptr;
  Crc32cTables* d_filled = nullptr;
  CUDA_TRY(bufs.Alloc(&d_arena, arena.size()));
  CUDA_TRY(bufs.Alloc(&d_out, arena.size()));
  CUDA_TRY(bufs.Alloc(&d_spans, n * sizeof(BlockSpan)));
  CUDA_TRY(bufs.Alloc(&d_crc, n * sizeof(uint32_t)));
  CUDA_TRY(bufs.Alloc(&d_ok, n));
  CUDA_TRY(bufs.Alloc(&d_filled, sizeof(Crc32cTables)));
  std::vector<uint8_t> zeroed = arena;
  for (const BlockSpan& s : spans) std::memset(&zeroed[s.offset + s.size + 1], 0, 4);
  CUDA_TRY(cudaMemcpy(d_arena, arena.data(), arena.size(), cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMemcpy(d_out, zeroed.data(), zeroed.size(), cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMemcpy(d_spans, spans.data(), n * sizeof(BlockSpan), cudaMemcpyHostToDevice));
  // A small grid, so warps loop over several spans.
  WarpCrcKernel<<<3, kThreads>>>(d_tables, d_arena, d_out, d_spans, n, d_crc, d_ok);
  CUDA_TRY(cudaGetLastError());
  FillTablesKernel<<<1, 96>>>(d_filled);
  CUDA_TRY(cudaGetLastError());
  CUDA_TRY(cudaDeviceSynchronize());
  out->crc.resize(n);
  out->ok.resize(n);
  out->written.resize(arena.size());
  CUDA_TRY(cudaMemcpy(out->crc.data(), d_crc, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CUDA_TRY(cudaMemcpy(out->ok.data(), d_ok, n, cudaMemcpyDeviceToHost));
  CUDA_TRY(cudaMemcpy(out->written.data(), d_out, arena.size(), cudaMemcpyDeviceToHost));
  auto filled = std::make_unique<Crc32cTables>();
  auto want = std::make_unique<Crc32cTables>();
  gpu::InitCrc32cTables(want.get());
  CUDA_TRY(cudaMemcpy(filled.get(), d_filled, sizeof(Crc32cTables), cudaMemcpyDeviceToHost));
  out->tables_match = std::memcmp(filled.get(), want.get(), sizeof(Crc32cTables)) == 0;
  return true;
}

bool TimeWarpCrcKernels(uint64_t blocks, uint64_t block_size, WarpCrcTiming* t,
                        std::string* reason) {
  if (!HaveDevice(reason)) return false;
  t->blocks = blocks;
  t->block_size = block_size;
  // Blocks back to back, each contents ++ type ++ masked CRC, 4 KiB apart
  // plus the trailer (so most start unaligned, as in a table file).
  const uint64_t stride = block_size + 5;
  std::vector<uint8_t> arena(blocks * stride);
  std::vector<BlockSpan> spans(blocks);
  Random rnd(401);
  for (uint64_t k = 0; k + 8 <= arena.size(); k += 8) {
    const uint64_t v = rnd.Next64();
    std::memcpy(&arena[k], &v, 8);
  }
  for (uint64_t b = 0; b < blocks; ++b) {
    spans[b] = BlockSpan{b * stride, block_size};
    const uint32_t masked = crc32c::Mask(
        crc32c::Value(reinterpret_cast<const char*>(&arena[b * stride]), block_size + 1));
    std::memcpy(&arena[b * stride + block_size + 1], &masked, 4);  // little-endian host
  }
  DeviceBuffers bufs;
  Crc32cTables* d_tables = nullptr;
  if (!DeviceTables(&bufs, &d_tables, reason)) return false;
  uint8_t* d_arena = nullptr;
  BlockSpan* d_spans = nullptr;
  unsigned long long* d_bad = nullptr;
  CUDA_TRY(bufs.Alloc(&d_arena, arena.size()));
  CUDA_TRY(bufs.Alloc(&d_spans, blocks * sizeof(BlockSpan)));
  CUDA_TRY(bufs.Alloc(&d_bad, sizeof(unsigned long long)));
  CUDA_TRY(cudaMemcpy(d_arena, arena.data(), arena.size(), cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMemcpy(d_spans, spans.data(), blocks * sizeof(BlockSpan), cudaMemcpyHostToDevice));
  cudaEvent_t start;
  cudaEvent_t stop;
  CUDA_TRY(cudaEventCreate(&start));
  CUDA_TRY(cudaEventCreate(&stop));
  bool all_ok = true;
  // Best of 5 after a warm-up; checks that no block was reported bad.
  auto time = [&](auto launch, double* ms) -> bool {
    *ms = 1e30;
    for (int rep = 0; rep < 6; ++rep) {
      CUDA_TRY(cudaMemset(d_bad, 0xff, sizeof(unsigned long long)));
      CUDA_TRY(cudaEventRecord(start));
      launch();
      CUDA_TRY(cudaGetLastError());
      CUDA_TRY(cudaEventRecord(stop));
      CUDA_TRY(cudaEventSynchronize(stop));
      float elapsed = 0;
      CUDA_TRY(cudaEventElapsedTime(&elapsed, start, stop));
      if (rep > 0) *ms = std::min(*ms, static_cast<double>(elapsed));
      unsigned long long bad = 0;
      CUDA_TRY(cudaMemcpy(&bad, d_bad, sizeof(bad), cudaMemcpyDeviceToHost));
      all_ok = all_ok && bad == ~0ull;
    }
    return true;
  };
  const int thread_grid = static_cast<int>((blocks + kThreads - 1) / kThreads);
  const int flat_grid = static_cast<int>((blocks + kThreads / 32 - 1) / (kThreads / 32));
  const int grid = ResidentGrid(blocks, reinterpret_cast<const void*>(&WarpVerifyKernel<false>));
  const int fill_grid =
      ResidentGrid(blocks, reinterpret_cast<const void*>(&WarpVerifyKernel<true>));
  auto by_thread = [&] {
    ThreadVerifyKernel<<<thread_grid, kThreads>>>(d_arena, d_spans, blocks, d_bad);
  };
  auto by_warp = [&] {
    WarpVerifyKernel<false><<<grid, kThreads>>>(d_tables, d_arena, d_spans, blocks, d_bad);
  };
  auto by_warp_flat = [&] {
    WarpVerifyKernel<false><<<flat_grid, kThreads>>>(d_tables, d_arena, d_spans, blocks, d_bad);
  };
  auto by_warp_fill = [&] {
    WarpVerifyKernel<true><<<fill_grid, kThreads>>>(d_tables, d_arena, d_spans, blocks, d_bad);
  };
  const bool ok = time(by_thread, &t->thread_ms) && time(by_warp, &t->warp_ms) &&
                  time(by_warp_flat, &t->warp_flat_ms) && time(by_warp_fill, &t->warp_fill_ms);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  t->all_ok = all_ok;
  return ok;
}

}  // namespace test
}  // namespace accelkv
