// zero_copy_gather_probe: can the device read every data block's key
// section and footer straight from page-locked host memory (zero copy)
// while the copy engine streams the whole tables in, fast enough to decode
// and sort the keys before the values have arrived? (docs/GPU.md, "What is
// left": a key-first job.) Standalone; prints one JSON line per case.
//
// A "table" of `bytes` in page-locked host memory (huge pages registered, as
// PinnedAllocate does), cut into blocks of `block` bytes. The gather reads
// each block's first `keys` bytes (prefix and suffixes) and its last 21
// (footer and trailer) into a device buffer at the same offsets: a warp per
// block. The bulk copy is one cudaMemcpyAsync per 16 MiB piece (the pinned
// in-memory Env's chunks). Times: each alone, then both at once on two
// streams.
//
// Build: nvcc -O3 -std=c++20 -arch=sm_90 -o zcg zero_copy_gather_probe.cu
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

__device__ void WarpCopy(const uint8_t* src, uint8_t* dst, uint32_t n, int lane) {
  // 4-byte words where both ends line up, bytes otherwise.
  for (uint32_t i = lane; i < n; i += 32) dst[i] = src[i];
}

__global__ void GatherKernel(const uint8_t* host, uint8_t* dev, uint64_t blocks, uint32_t block,
                             uint32_t keys) {
  const uint64_t warp = (blockIdx.x * uint64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const uint64_t warps = gridDim.x * uint64_t{blockDim.x} / 32;
  for (uint64_t b = warp; b < blocks; b += warps) {
    const uint64_t at = b * block;
    WarpCopy(host + at, dev + at, keys, lane);
    WarpCopy(host + at + block - 21, dev + at + block - 21, 21, lane);
  }
}

// Word-wide variant: lanes read 8-byte words (block starts are 8-aligned here).
__global__ void GatherWordsKernel(const uint8_t* host, uint8_t* dev, uint64_t blocks,
                                  uint32_t block, uint32_t keys) {
  const uint64_t warp = (blockIdx.x * uint64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const uint64_t warps = gridDim.x * uint64_t{blockDim.x} / 32;
  for (uint64_t b = warp; b < blocks; b += warps) {
    const uint64_t at = b * block;
    const uint64_t* s = reinterpret_cast<const uint64_t*>(host + at);
    uint64_t* d = reinterpret_cast<uint64_t*>(dev + at);
    for (uint32_t i = lane; i < (keys + 7) / 8; i += 32) d[i] = s[i];
    const uint64_t tail = (at + block - 24) / 8 * 8;
    if (lane < 4) {
      reinterpret_cast<uint64_t*>(dev + tail)[lane] =
          reinterpret_cast<const uint64_t*>(host + tail)[lane];
    }
  }
}

int main(int argc, char** argv) {
  const uint64_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 231ull << 20;
  const size_t piece = 16 << 20;
  const size_t map = (bytes + (2 << 20) - 1) / (2 << 20) * (2 << 20);
  void* h = mmap(nullptr, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (h == MAP_FAILED) return 1;
  madvise(h, map, MADV_HUGEPAGE);
  std::memset(h, 7, map);
  CHECK(cudaHostRegister(h, map, cudaHostRegisterDefault));
  int can = 0;
  CHECK(cudaDeviceGetAttribute(&can, cudaDevAttrCanUseHostPointerForRegisteredMem, 0));
  uint8_t* hp = nullptr;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&hp), h, 0));
  uint8_t *d = nullptr, *shadow = nullptr;
  CHECK(cudaMalloc(&d, map));
  CHECK(cudaMalloc(&shadow, map));
  cudaStream_t copy, gather;
  CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&gather, cudaStreamNonBlocking));
  cudaEvent_t c0, c1, g0, g1;
  for (cudaEvent_t* e : {&c0, &c1, &g0, &g1}) CHECK(cudaEventCreate(e));
  auto bulk = [&] {
    CHECK(cudaEventRecord(c0, copy));
    for (uint64_t at = 0; at < bytes; at += piece) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(piece, bytes - at));
      CHECK(
          cudaMemcpyAsync(d + at, static_cast<uint8_t*>(h) + at, n, cudaMemcpyHostToDevice, copy));
    }
    CHECK(cudaEventRecord(c1, copy));
  };
  struct Case {
    uint32_t block, keys;
    const char* name;
  };
  const Case cases[] = {{4096 + 16 + 24 + 5, 24, "4KiB-1entry"},
                        {4 * (1024 + 24) + 16 + 5, 4 * 24, "1KiB-4entries"},
                        {27 * (128 + 24) + 16 + 5, 27 * 24, "128B-27entries"}};
  for (int words = 0; words < 2; ++words) {
    for (const Case& c : cases) {
      // Block sizes rounded to 8 for the word kernel.
      const uint32_t block = words ? (c.block + 7) / 8 * 8 : c.block;
      const uint64_t blocks = bytes / block;
      auto launch = [&] {
        CHECK(cudaEventRecord(g0, gather));
        if (words) {
          GatherWordsKernel<<<1056, 256, 0, gather>>>(hp, shadow, blocks, block, c.keys);
        } else {
          GatherKernel<<<1056, 256, 0, gather>>>(hp, shadow, blocks, block, c.keys);
        }
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(g1, gather));
      };
      for (int round = 0; round < 3; ++round) {
        float bulk_alone = 0, gather_alone = 0, bulk_both = 0, gather_both = 0, wall_both = 0;
        bulk();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaEventElapsedTime(&bulk_alone, c0, c1));
        launch();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaEventElapsedTime(&gather_alone, g0, g1));
        const auto t0 = std::chrono::steady_clock::now();
        bulk();
        launch();
        CHECK(cudaDeviceSynchronize());
        wall_both =
            std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
        CHECK(cudaEventElapsedTime(&bulk_both, c0, c1));
        CHECK(cudaEventElapsedTime(&gather_both, g0, g1));
        std::printf(
            "{\"case\":\"%s\",\"words\":%d,\"round\":%d,\"blocks\":%llu,\"gathered_mb\":%.2f,"
            "\"bulk_alone_ms\":%.3f,\"bulk_gbps\":%.1f,\"gather_alone_ms\":%.3f,"
            "\"bulk_both_ms\":%.3f,\"gather_both_ms\":%.3f,\"wall_both_ms\":%.3f,"
            "\"host_ptr_ok\":%d}\n",
            c.name, words, round, static_cast<unsigned long long>(blocks),
            blocks * (c.keys + 21) / 1e6, bulk_alone, bytes / 1e6 / bulk_alone, gather_alone,
            bulk_both, gather_both, wall_both, can);
      }
    }
  }
  return 0;
}
