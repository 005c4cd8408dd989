// host_bandwidth: the host-memory and PCIe rates that bound a compaction job
// whose tables are in memory (docs/GPU.md, "Targets"): CPU threads copying
// ordinary pages into pinned ones (the GPU job's read stage), pinned into
// ordinary (its writers), reading and writing alone, the copy engines in
// each direction, the CPU copies beside each copy engine, and copies in the
// in-memory Env's 64 KiB and the GPU writers' 2 MiB pieces, by memcpy and by
// streaming stores (util/streaming_copy.h). One JSON line
// per test: bytes moved per second by each side (best and median of the
// repeats). The copy engines are timed by CUDA events, the CPU threads by
// the host clock. CMake builds it where CUDA is (target host_bandwidth);
// bench/device_ab.sh (HOST_BW=1) builds it on the GPU machine with
//
//   nvcc -O2 -std=c++20 -arch=sm_90 -Xcompiler -Wall,-Wextra,-pthread -Isrc
//     bench/host_bandwidth.cu src/util/streaming_copy.cc -o host_bandwidth
//
// Usage: host_bandwidth [MiB per buffer, default 256] [repeats, default 7].
// Exit status 1 (with the CUDA error) where there is no GPU, 2 on bad
// arguments.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "util/streaming_copy.h"

namespace {

#define CHECK(call)                                                      \
  do {                                                                   \
    const cudaError_t err_ = (call);                                     \
    if (err_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs fn(part, begin, end) over [0, bytes) cut into `threads` parts, one
// thread each; returns the seconds from the start to the last one's end.
double OnThreads(size_t threads, size_t bytes,
                 const std::function<void(size_t, size_t, size_t)>& fn) {
  std::vector<std::thread> pool;
  std::atomic<size_t> ready{0};
  std::atomic<bool> go{false};
  for (size_t t = 0; t < threads; t++) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) {
      }
      const size_t begin = bytes * t / threads / 64 * 64;
      const size_t end = t + 1 == threads ? bytes : bytes * (t + 1) / threads / 64 * 64;
      fn(t, begin, end);
    });
  }
  while (ready.load() < threads) {
  }
  const double start = Now();
  go.store(true);
  for (std::thread& th : pool) th.join();
  return Now() - start;
}

struct Rates {
  std::vector<double> a, b;  // GB/s of each side, one per repeat
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void Print(const std::string& test, const Rates& r, const char* a, const char* b) {
  std::printf("{\"test\": \"%s\", \"%s_gbps_best\": %.2f, \"%s_gbps_median\": %.2f", test.c_str(),
              a, *std::max_element(r.a.begin(), r.a.end()), a, Median(r.a));
  if (b != nullptr) {
    std::printf(", \"%s_gbps_best\": %.2f, \"%s_gbps_median\": %.2f", b,
                *std::max_element(r.b.begin(), r.b.end()), b, Median(r.b));
  }
  std::printf("}\n");
  std::fflush(stdout);
}

}  // namespace

using accelkv::StreamingCopy;

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 7;
  if (mib == 0 || mib > (size_t{1} << 20) || repeats <= 0) {
    std::fprintf(stderr, "usage: host_bandwidth [MiB > 0] [repeats > 0]\n");
    return 2;
  }
  const size_t bytes = mib << 20;
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  char* plain = static_cast<char*>(std::malloc(bytes));
  char* plain2 = static_cast<char*>(std::malloc(bytes));
  if (plain == nullptr || plain2 == nullptr) {
    std::fprintf(stderr, "host_bandwidth: cannot allocate 2 x %zu MiB\n", mib);
    return 1;
  }
  char *pinned = nullptr, *pinned2 = nullptr, *dev = nullptr, *dev2 = nullptr;
  CHECK(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault));
  CHECK(cudaHostAlloc(&pinned2, bytes, cudaHostAllocDefault));
  CHECK(cudaMalloc(&dev, bytes));
  CHECK(cudaMalloc(&dev2, bytes));
  for (char* p : {plain, plain2, pinned, pinned2}) std::memset(p, 1, bytes);  // faulted in
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  std::printf("{\"mib\": %zu, \"repeats\": %d, \"cores\": %zu}\n", mib, repeats, cores);
  const double gb = static_cast<double>(bytes) / 1e9;
  std::atomic<uint64_t> sink{0};

  auto copy = [&](char* dst, const char* src) {
    return [dst, src](size_t, size_t b, size_t e) { std::memcpy(dst + b, src + b, e - b); };
  };
  // A test of the CPU threads alone: fn over each thread's part, `repeats`
  // times.
  auto on_cpu = [&](const std::string& name, size_t threads, const char* side,
                    const std::function<void(size_t, size_t, size_t)>& fn) {
    Rates r;
    for (int i = 0; i < repeats; i++) r.a.push_back(gb / OnThreads(threads, bytes, fn));
    Print(name + "_t" + std::to_string(threads), r, side, nullptr);
  };
  for (size_t t : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, cores}) {
    on_cpu("copy_plain_to_pinned", t, "copy", copy(pinned, plain));
  }
  on_cpu("copy_pinned_to_plain", cores, "copy", copy(plain2, pinned));
  // The in-memory Env's copies go by its 64 KiB chunks, the GPU writers' by
  // 2 MiB pieces: memcpy at those sizes (below glibc's non-temporal
  // threshold: rep movsb), and the same by streaming stores.
  using CopyFn = void (*)(char*, const char*, size_t);
  const CopyFn by_memcpy = [](char* d, const char* s, size_t n) { std::memcpy(d, s, n); };
  auto in_pieces = [](char* dst, const char* src, size_t piece, CopyFn fn) {
    return [=](size_t, size_t b, size_t e) {
      for (size_t k = b; k < e; k += piece) fn(dst + k, src + k, std::min(piece, e - k));
    };
  };
  for (size_t piece : {size_t{64} << 10, size_t{2} << 20}) {
    const std::string kib = "_pieces_" + std::to_string(piece >> 10) + "k";
    for (const auto& [name, fn] : {std::pair{"copy", by_memcpy}, {"stream", &StreamingCopy}}) {
      on_cpu(std::string(name) + "_plain_to_pinned" + kib, cores, "copy",
             in_pieces(pinned, plain, piece, fn));
      on_cpu(std::string(name) + "_pinned_to_plain" + kib, cores, "copy",
             in_pieces(plain2, pinned, piece, fn));
    }
  }
  on_cpu("read", cores, "read", [&](size_t, size_t b, size_t e) {
    uint64_t sum = 0;
    for (size_t k = b; k < e; k += 8) {
      uint64_t w;
      std::memcpy(&w, plain + k, 8);
      sum += w;
    }
    sink.fetch_add(sum);
  });
  on_cpu("write", cores, "write",
         [&](size_t, size_t b, size_t e) { std::memset(plain2 + b, 2, e - b); });
  // The copy engines, timed by events: one direction, then both at once.
  cudaEvent_t e0, e1, e2, e3;
  for (cudaEvent_t* e : {&e0, &e1, &e2, &e3}) CHECK(cudaEventCreate(e));
  auto gbps = [&](cudaEvent_t from, cudaEvent_t to) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, from, to));
    return gb / (ms / 1e3);
  };
  auto engine = [&](void* dst, const void* src, cudaMemcpyKind kind) {
    CHECK(cudaEventRecord(e0, s1));
    CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s1));
    CHECK(cudaEventRecord(e1, s1));
    CHECK(cudaEventSynchronize(e1));
    return gbps(e0, e1);
  };
  {
    Rates h, d, both;
    for (int i = 0; i < repeats; i++) {
      h.a.push_back(engine(dev, pinned, cudaMemcpyHostToDevice));
      d.a.push_back(engine(pinned2, dev2, cudaMemcpyDeviceToHost));
      CHECK(cudaEventRecord(e0, s1));
      CHECK(cudaStreamWaitEvent(s2, e0));
      CHECK(cudaEventRecord(e2, s2));
      CHECK(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, s1));
      CHECK(cudaMemcpyAsync(pinned2, dev2, bytes, cudaMemcpyDeviceToHost, s2));
      CHECK(cudaEventRecord(e1, s1));
      CHECK(cudaEventRecord(e3, s2));
      CHECK(cudaDeviceSynchronize());
      both.a.push_back(gbps(e0, e1));
      both.b.push_back(gbps(e2, e3));
    }
    Print("h2d", h, "h2d", nullptr);
    Print("d2h", d, "d2h", nullptr);
    Print("h2d_with_d2h", both, "h2d", "d2h");
  }
  // CPU copies beside a copy engine: the read stage (plain -> pinned beside
  // H2D from another pinned buffer) and the writers (pinned -> plain beside
  // D2H into another pinned buffer).
  auto beside = [&](const char* name, char* dst, const char* src, void* edst, const void* esrc,
                    cudaMemcpyKind kind) {
    Rates r;
    for (int i = 0; i < repeats; i++) {
      CHECK(cudaEventRecord(e0, s1));
      CHECK(cudaMemcpyAsync(edst, esrc, bytes, kind, s1));
      CHECK(cudaEventRecord(e1, s1));
      const double cpu = OnThreads(cores, bytes, copy(dst, src));
      CHECK(cudaEventSynchronize(e1));
      r.a.push_back(gb / cpu);
      r.b.push_back(gbps(e0, e1));
    }
    Print(name, r, "copy", "engine");
  };
  beside("copy_plain_to_pinned_beside_h2d", pinned, plain, dev, pinned2, cudaMemcpyHostToDevice);
  beside("copy_pinned_to_plain_beside_d2h", plain2, pinned, pinned2, dev, cudaMemcpyDeviceToHost);
  for (cudaEvent_t e : {e0, e1, e2, e3}) CHECK(cudaEventDestroy(e));
  std::printf("{\"sink\": %llu}\n", static_cast<unsigned long long>(sink.load() & 1));
  CHECK(cudaFree(dev));
  CHECK(cudaFree(dev2));
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFreeHost(pinned2));
  std::free(plain);
  std::free(plain2);
  return 0;
}
