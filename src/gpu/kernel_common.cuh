// What the CUDA device's kernels share (cuda_key_sort_device.cu includes
// this and the kernel headers, one translation unit; the kernels and their
// helpers have internal linkage there): the thread-block size, the block
// size classes, the counters and the mailbox, and the warp- and
// thread-block-wide loops and CRC32C reductions.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpu/crc32c_device.h"

namespace accelkv {
namespace gpu {
namespace {

constexpr int kThreads = 256;
// Output data blocks of at least this many bytes (contents) are encoded by
// a thread block each (EncodeLargeBlocksKernel), smaller ones by a warp.
constexpr uint64_t kLargeBlockBytes = 16 << 10;
// ...and from kHugeBlockBytes up by a thread block per kHugeSliceBytes
// (EncodeHugeBlocksKernel, HugeBlocksCrcKernel): a 32 MiB encode chunk of
// 16 MiB values holds two blocks, which two thread blocks encoded in 11 ms
// per job, 3.4 ms since (bench/results/2026-11-26-h100-encode-huge-blocks.md).
constexpr uint64_t kHugeBlockBytes = 1 << 20;
constexpr uint64_t kHugeSliceBytes = 128 << 10;

struct Counters {
  unsigned long long bad_block;  // ~0: none
  unsigned long long num_kept;
  unsigned int duplicate;
};

// The small results the host waits for mid-job, in pinned host memory the
// device maps (zero copy). PublishKernel writes them there from device
// memory: a cudaMemcpyAsync back would be served by the copy engine after
// the large copies back already queued (the decoded keys, 50-120 MB at
// 32-128 B values), and waited 1-2 ms behind them.
struct Mailbox {
  unsigned long long bad_entry;      // DecodeKeysKernel's lowest malformed key, ~0: none
  unsigned long long radix_mask[3];  // RadixDiffKernel's differing bits
  unsigned long long counters[3];    // Counters, as 8-byte words
  unsigned long long check[7];       // CheckTotals (decode_kernels.cuh), as 8-byte words
  unsigned long long verified[1];    // a key-first job's lowest bad block (Counters::bad_block)
};
static_assert(sizeof(Counters) == 3 * sizeof(unsigned long long));

// CudaKeySortDevice::Upload: n bytes from page-locked host memory (read
// in place) to device memory, 8-byte words where both line up.
__global__ void UploadKernel(uint8_t* dst, const uint8_t* src, uint64_t n) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  const uint64_t first = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x;
  if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 7u) == 0) {
    const uint64_t words = n / 8;
    for (uint64_t i = first; i < words; i += stride) {
      reinterpret_cast<uint64_t*>(dst)[i] = reinterpret_cast<const uint64_t*>(src)[i];
    }
    for (uint64_t i = words * 8 + first; i < n; i += stride) dst[i] = src[i];
  } else {
    for (uint64_t i = first; i < n; i += stride) dst[i] = src[i];
  }
}

// The least and the greatest of v over the warp's 32 lanes, in every lane
// (every lane calls it). Kernels that fold a value per thread into one
// total reduce it per warp first: with an atomic per thread on one address
// (59,000 blocks of a 231 MB job), CheckBlocksKernel took 92 us on the H200
// and WriteDecodeBlocksKernel about 65; with one per warp 13 and 33
// (bench/results/2026-11-28-h200-check-atomics.md).
__device__ inline unsigned long long WarpMin(unsigned long long v) {
  for (int d = 16; d > 0; d >>= 1) v = min(v, __shfl_xor_sync(0xffffffffu, v, d));
  return v;
}
__device__ inline unsigned long long WarpMax(unsigned long long v) {
  for (int d = 16; d > 0; d >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, d));
  return v;
}

__global__ void PublishKernel(const unsigned long long* src, unsigned long long* dst,
                              uint32_t words) {
  if (threadIdx.x < words) dst[threadIdx.x] = src[threadIdx.x];
}

// The warp-per-item kernels' loop (verify, encode, filter CRCs): calls
// fn(item, lane) for items [0, n), one warp per item, grid-stride, after
// each thread block loaded the CRC32C slicing and shift tables into shared
// memory (crc32c_device.h), which fn reads as `tables`.
template <typename Fn>
__device__ void ForEachItemPerWarp(const Crc32cTables* g_tables, Crc32cTables* tables, uint64_t n,
                                   Fn&& fn) {
  LoadCrc32cTables(tables, g_tables, threadIdx.x, blockDim.x);
  __syncthreads();
  const uint32_t lane = threadIdx.x & 31u;
  const uint64_t warps = uint64_t{gridDim.x} * (blockDim.x / 32);
  for (uint64_t i = (blockIdx.x * uint64_t{blockDim.x} + threadIdx.x) / 32; i < n; i += warps) {
    fn(i, lane);
  }
}

// CRC32C of p[0, n) by the whole thread block: each thread checksums a
// chunk (CrcPartShifted), the parts XOR-reduced per warp and then across
// the warps. Every thread of the block calls it; the result is thread 0's.
// scratch: kThreads / 32 words of shared memory, free again on return.
__device__ uint32_t ThreadBlockCrc32c(const Crc32cTables& tables, const uint8_t* p, uint64_t n,
                                      uint32_t* scratch) {
  const uint32_t reg = WarpXor(CrcPartShifted(tables, p, n, threadIdx.x, blockDim.x));
  if ((threadIdx.x & 31u) == 0) scratch[threadIdx.x / 32] = reg;
  __syncthreads();
  uint32_t all = 0;
  if (threadIdx.x == 0) {
    for (uint32_t k = 0; k < blockDim.x / 32; ++k) all ^= scratch[k];
  }
  __syncthreads();  // scratch is reused
  return ~all;
}

unsigned int Grid(uint64_t n) { return static_cast<unsigned int>((n + kThreads - 1) / kThreads); }

// The grid of a grid-stride warp-per-item kernel over n items: one warp
// per item up to `max_blocks` thread blocks (those that fit the device).
unsigned int WarpGrid(uint64_t n, unsigned int max_blocks) {
  return static_cast<unsigned int>(
      std::max<uint64_t>(1, std::min<uint64_t>(Grid(n * 32), max_blocks)));
}

}  // namespace
}  // namespace gpu
}  // namespace accelkv
