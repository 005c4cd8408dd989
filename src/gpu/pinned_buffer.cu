#include "gpu/pinned_buffer.h"

#include <sys/mman.h>

#include <algorithm>

#include "gpu/cuda_support.h"
#include "util/align.h"
#include "util/huge_pages.h"

namespace accelkv {
namespace gpu {

namespace {

// Below it cudaHostAlloc, from it up huge pages registered (pinned_buffer.h).
constexpr size_t kPinnedMapMin = size_t{4} << 20;

// The bytes PinnedMap(bytes) maps (0: none, cudaHostAlloc).
size_t PinnedMapped(size_t bytes) {
  return bytes < kPinnedMapMin ? 0 : AlignUp(bytes, kHugePageSize);
}

}  // namespace

cudaError_t PinnedMap(size_t bytes, void** p) {
  *p = nullptr;
  const size_t size = PinnedMapped(bytes);
  if (size == 0) return cudaHostAlloc(p, std::max<size_t>(bytes, 1), cudaHostAllocDefault);
  void* q = MapHugePages(size);
  if (q == nullptr) return cudaErrorMemoryAllocation;
  const cudaError_t e = cudaHostRegister(q, size, cudaHostRegisterDefault);
  if (e != cudaSuccess) {
    munmap(q, size);
    return e;
  }
  *p = q;
  return cudaSuccess;
}

void PinnedUnmap(void* p, size_t bytes) {
  if (p == nullptr) return;
  const size_t mapped = PinnedMapped(bytes);
  if (mapped == 0) {
    cudaFreeHost(p);
    return;
  }
  cudaHostUnregister(p);
  munmap(p, mapped);
}

void* PinnedAllocate(size_t bytes) {
  void* p = nullptr;
  if (PinnedMap(bytes, &p) != cudaSuccess) {
    cudaGetLastError();  // not sticky: HostVector falls back to ordinary memory
    return nullptr;
  }
  return p;
}
void PinnedFree(void* p, size_t bytes) { PinnedUnmap(p, bytes); }

Status PinnedBuffer::Get(uint64_t bytes, const char* stage, uint8_t** p) {
  if (bytes > capacity_) {
    const uint64_t grown = AlignUp(std::max(bytes, capacity_ + capacity_ / 2), kGrowthUnit);
    PinnedUnmap(raw_, raw_bytes_);
    raw_ = nullptr;
    raw_bytes_ = 0;
    data_ = nullptr;
    capacity_ = 0;
    uint64_t n = std::max<uint64_t>(grown, 1);
    void* raw = nullptr;
    cudaError_t e = PinnedMap(n, &raw);
    if (e != cudaSuccess && n > bytes) {
      cudaGetLastError();  // not sticky: try the exact size
      n = std::max<uint64_t>(bytes, 1);
      e = PinnedMap(n, &raw);
    }
    ACCELKV_CUDA_TRY(stage, e);
    uint64_t raw_bytes = n;
    if (!IsAligned(reinterpret_cast<uintptr_t>(raw), kAlignment)) {
      PinnedUnmap(raw, raw_bytes);
      raw = nullptr;
      raw_bytes = n + kAlignment - 1;
      ACCELKV_CUDA_TRY(stage, PinnedMap(raw_bytes, &raw));
    }
    raw_bytes_ = raw_bytes;
    raw_ = static_cast<uint8_t*>(raw);
    data_ = raw_ + (AlignUp(reinterpret_cast<uintptr_t>(raw), kAlignment) -
                    reinterpret_cast<uintptr_t>(raw));
    capacity_ = n;
  }
  *p = data_;
  return Status::OK();
}

}  // namespace gpu
}  // namespace accelkv
