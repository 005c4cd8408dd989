// Host-side helpers of the CUDA device (cuda_key_sort_device.cu): CUDA
// errors as Status, one job's stream-ordered allocations, the upload of key
// lists and the growth of an event pool. CUDA builds only.
//
// Thread safety: JobAllocations is driven by one thread; the functions are
// safe to call from any.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "accelkv/status.h"
#include "gpu/gpu_util.h"
#include "gpu/key_sort_device.h"

namespace accelkv {
namespace gpu {

// Aborted("gpu: <stage>: <CUDA error name>", <its description>): every CUDA
// error of a job (the executor reruns the job on the CPU).
Status CudaFailure(const char* stage, cudaError_t e);

#define ACCELKV_CUDA_TRY(stage, expr)                         \
  do {                                                        \
    const cudaError_t err_ = (expr);                          \
    if (err_ != cudaSuccess) return CudaFailure(stage, err_); \
  } while (0)

// How the host waits for the device (docs/GPU.md, "Host waits and the
// job's middle"): it polls for kPollMicros, then naps kNapMicros at a time
// (its timer slack lowered meanwhile) until kNapLimitMicros have passed,
// then sleeps until the device wakes it. A thread that slept at once (the device's blocking-sync
// schedule) woke 0.1-0.25 ms after the device was done on a loaded machine,
// in each of the dozen waits a job makes; a nap's wake-up is late by about
// the nap. The naps cost a few microseconds of CPU each, and a long wait
// (a stalled device) still ends asleep. ACCELKV_GPU_WAIT=poll leaves the
// naps out (measurements).
inline constexpr uint64_t kPollMicros = 200;
inline constexpr uint64_t kNapMicros = 20;
inline constexpr uint64_t kNapLimitMicros = 5000;

// Whether waits nap after their polling: with ACCELKV_GPU_WAIT unset or
// "block" (not "poll", "spin" or "yield").
bool NapWaits();

// Sleeps about kNapMicros, with the calling thread's timer slack lowered to
// a microsecond for the nap (the default, 50 us, would make it 70).
void Nap();

// Waits until query() returns other than cudaErrorNotReady (returning
// that), polling, napping and at last calling block() (which sleeps until
// the device is done) as above.
template <typename Query, typename Block>
cudaError_t WaitDevice(Query query, Block block) {
  const auto start = std::chrono::steady_clock::now();
  const bool nap = NapWaits();
  for (;;) {
    const cudaError_t e = query();
    if (e != cudaErrorNotReady) return e;
    const uint64_t waited = MicrosSince(start);
    if (waited >= (nap ? kNapLimitMicros : kPollMicros)) break;
    if (waited >= kPollMicros) Nap();
  }
  cudaGetLastError();  // cudaErrorNotReady is not sticky, but clear it
  return block();
}

// Waits for what stream st has queued (WaitDevice over cudaStreamQuery,
// then cudaStreamSynchronize).
cudaError_t SyncStream(cudaStream_t st);

// Stream-ordered allocations of one job, freed (and the stream drained) on
// every exit path, so the host arena is never reused under a live copy.
// A second stream whose work reads them (DrainFirst) is drained before.
class JobAllocations {
 public:
  explicit JobAllocations(cudaStream_t stream) : stream_(stream) {}
  ~JobAllocations() {
    if (first_ != nullptr) SyncStream(first_);
    for (void* p : ptrs_) cudaFreeAsync(p, stream_);
    SyncStream(stream_);
    cudaGetLastError();  // a failed job's error is reported by Run
  }
  void DrainFirst(cudaStream_t other) { first_ = other; }
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
  cudaStream_t first_ = nullptr;
  std::vector<void*> ptrs_;
};

// Copies host bytes to device memory, ordered on a stream (the CUDA
// device's Upload: cudaMemcpyAsync, or a copy kernel while a key-first
// job's staged copies hold the copy engine).
using HostUpload = std::function<cudaError_t(void* dst, const void* src, uint64_t bytes)>;

// Uploads two key lists with upload (both lists' bytes in one allocation,
// both offsets in another, from mem) and gives their device views.
cudaError_t UploadKeyLists(const KeyList& a, const KeyList& b, const HostUpload& upload,
                           JobAllocations* mem, KeyListView* da, KeyListView* db);

// Creates events (with flags) until *events holds n.
cudaError_t GrowEvents(std::vector<cudaEvent_t>* events, size_t n, unsigned int flags);

}  // namespace gpu
}  // namespace accelkv
