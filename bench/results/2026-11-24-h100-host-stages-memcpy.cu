// Experiment of bench/results/2026-11-24-h100-host-stages.md (not part of the build).
// Device-machine experiment: 2-16 threads copy 200 MB out of 64 KiB chunks into a
// pinned buffer, with memcpy or non-temporal stores, with and without a DMA
// reading another pinned buffer at the same time.
#include <cuda_runtime.h>
#include <emmintrin.h>
#include <immintrin.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
static void CopyNt(char* dst, const char* src, size_t n) {
  size_t i = 0;
  while (i < n && (reinterpret_cast<uintptr_t>(dst + i) & 15)) {
    dst[i] = src[i];
    ++i;
  }
  for (; i + 64 <= n; i += 64) {
    __m128i a = _mm_loadu_si128((const __m128i*)(src + i));
    __m128i b = _mm_loadu_si128((const __m128i*)(src + i + 16));
    __m128i c = _mm_loadu_si128((const __m128i*)(src + i + 32));
    __m128i d = _mm_loadu_si128((const __m128i*)(src + i + 48));
    _mm_stream_si128((__m128i*)(dst + i), a);
    _mm_stream_si128((__m128i*)(dst + i + 16), b);
    _mm_stream_si128((__m128i*)(dst + i + 32), c);
    _mm_stream_si128((__m128i*)(dst + i + 48), d);
  }
  for (; i < n; ++i) dst[i] = src[i];
  _mm_sfence();
}
int main() {
  const size_t kChunk = 64 << 10, kTotal = 200ull << 20, kTables = 24;
  const size_t per_table = kTotal / kTables / kChunk * kChunk;
  std::vector<std::unique_ptr<char[]>> chunks(kTotal / kChunk);
  for (auto& c : chunks) {
    c = std::make_unique<char[]>(kChunk);
    memset(c.get(), 7, kChunk);
  }
  char *dst, *other;
  cudaHostAlloc(&dst, kTotal, 0);
  cudaHostAlloc(&other, kTotal, 0);
  memset(dst, 1, kTotal);
  memset(other, 1, kTotal);
  char* dev;
  cudaMalloc(&dev, kTotal);
  cudaStream_t st;
  cudaStreamCreate(&st);
  for (int rep = 0; rep < 3; ++rep)
    for (int threads : {2, 4, 8, 16})
      for (int nt = 0; nt < 2; ++nt)
        for (int dma = 0; dma < 2; ++dma) {
          if (dma)
            for (int k = 0; k < 3; ++k)
              cudaMemcpyAsync(dev, other, kTotal, cudaMemcpyHostToDevice, st);
          auto t0 = std::chrono::steady_clock::now();
          std::vector<std::thread> th;
          std::atomic<size_t> next{0};
          for (int t = 0; t < threads; ++t)
            th.emplace_back([&] {
              for (size_t tb; (tb = next++) < kTables;) {
                for (size_t off = 0; off < per_table; off += kChunk) {
                  size_t ci = (tb * per_table + off) / kChunk;
                  if (nt)
                    CopyNt(dst + tb * per_table + off, chunks[ci].get(), kChunk);
                  else
                    memcpy(dst + tb * per_table + off, chunks[ci].get(), kChunk);
                }
              }
            });
          for (auto& x : th) x.join();
          double ms =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count();
          cudaStreamSynchronize(st);
          printf("rep %d threads %d %s dma %d: %.2f ms, %.1f GB/s\n", rep, threads,
                 nt ? "nt    " : "memcpy", dma, ms, per_table * kTables / ms / 1e6);
        }
  return 0;
}
