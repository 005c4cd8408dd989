// Host-side helpers of the CUDA device (cuda_key_sort_device.cu): CUDA
// errors as Status, one job's stream-ordered allocations, the upload of key
// lists and the growth of an event pool. CUDA builds only.
//
// Thread safety: JobAllocations is driven by one thread; the functions are
// safe to call from any.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "accelkv/status.h"
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

// Stream-ordered allocations of one job, freed (and the stream drained) on
// every exit path, so the host arena is never reused under a live copy.
// A second stream whose work reads them (DrainFirst) is drained before.
class JobAllocations {
 public:
  explicit JobAllocations(cudaStream_t stream) : stream_(stream) {}
  ~JobAllocations() {
    if (first_ != nullptr) cudaStreamSynchronize(first_);
    for (void* p : ptrs_) cudaFreeAsync(p, stream_);
    cudaStreamSynchronize(stream_);
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
