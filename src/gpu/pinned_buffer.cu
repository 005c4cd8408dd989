#include "gpu/pinned_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "gpu/cuda_support.h"
#include "gpu/pinned_pool.h"
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

// The regions PinnedMap returned and PinnedUnmap has not freed: first
// byte -> end. Never destroyed (regions are freed during the exit).
class PinnedRegions {
 public:
  void Add(const void* p, size_t size) {
    std::unique_lock<std::shared_mutex> l(mu_);
    regions_[reinterpret_cast<uintptr_t>(p)] = reinterpret_cast<uintptr_t>(p) + size;
  }
  void Remove(const void* p) {
    std::unique_lock<std::shared_mutex> l(mu_);
    regions_.erase(reinterpret_cast<uintptr_t>(p));
  }
  bool Contains(const void* p, size_t size) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    std::shared_lock<std::shared_mutex> l(mu_);
    auto it = regions_.upper_bound(a);  // the first region starting after p
    if (it == regions_.begin()) return false;
    --it;
    return a + size <= it->second;
  }

 private:
  mutable std::shared_mutex mu_;
  std::map<uintptr_t, uintptr_t> regions_;
};

PinnedRegions& Regions() {
  static PinnedRegions* const regions = new PinnedRegions;
  return *regions;
}

}  // namespace

cudaError_t PinnedMap(size_t bytes, void** p) {
  *p = nullptr;
  const size_t size = PinnedMapped(bytes);
  if (size == 0) {
    const cudaError_t e = cudaHostAlloc(p, std::max<size_t>(bytes, 1), cudaHostAllocDefault);
    if (e == cudaSuccess) Regions().Add(*p, std::max<size_t>(bytes, 1));
    return e;
  }
  void* q = MapHugePages(size);
  if (q == nullptr) return cudaErrorMemoryAllocation;
  const cudaError_t e = cudaHostRegister(q, size, cudaHostRegisterDefault);
  if (e != cudaSuccess) {
    munmap(q, size);
    return e;
  }
  Regions().Add(q, size);
  *p = q;
  return cudaSuccess;
}

bool KnownPinned(const void* p, size_t size) { return Regions().Contains(p, size); }

void PinnedUnmap(void* p, size_t bytes) {
  if (p == nullptr) return;
  Regions().Remove(p);
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

namespace {

void* PoolMap(size_t bytes) {
  void* p = nullptr;
  if (PinnedMap(bytes, &p) != cudaSuccess) {
    cudaGetLastError();  // not sticky: the pool tries a smaller size or fails the Get
    return nullptr;
  }
  return p;
}

}  // namespace

PinnedPool& ProcessPinnedPool() {
  // Never destroyed: devices give their regions back from their destructors,
  // which may run during the process's exit.
  static PinnedPool* const pool = new PinnedPool(PinnedPool::Memory{&PoolMap, &PinnedUnmap});
  return *pool;
}

Status PinnedBuffer::Get(uint64_t bytes, const char* stage, uint8_t** p) {
  if (bytes > capacity_) {
    Release();
    // Growing: by at least half (see the class comment); else the size it
    // had, which the pool most likely holds free. Its own size, not the
    // region's: a region the pool hands out may be larger (PinnedPool::
    // kMaxSlack), and growing from that would ratchet the sizes up.
    if (bytes > size_) size_ = AlignUp(std::max(bytes, size_ + size_ / 2), kGrowthUnit);
    const uint64_t grown = size_;
    const uint64_t need = std::max<uint64_t>(bytes, 1);
    PinnedPool::Region r = pool_->Take(need, grown);
    if (r.p != nullptr && !IsAligned(reinterpret_cast<uintptr_t>(r.p), kAlignment) &&
        r.bytes - (AlignUp(reinterpret_cast<uintptr_t>(r.p), kAlignment) -
                   reinterpret_cast<uintptr_t>(r.p)) <
            need) {
      // cudaHostAlloc returns page-aligned memory in practice; should it
      // not, a region with room to align in.
      pool_->Give(r);
      r = pool_->Take(need + kAlignment - 1, grown + kAlignment - 1);
    }
    if (r.p == nullptr) return CudaFailure(stage, cudaErrorMemoryAllocation);
    region_ = r;
    const uintptr_t raw = reinterpret_cast<uintptr_t>(r.p);
    data_ = static_cast<uint8_t*>(r.p) + (AlignUp(raw, kAlignment) - raw);
    capacity_ = r.bytes - static_cast<uint64_t>(data_ - static_cast<uint8_t*>(r.p));
  }
  *p = data_;
  return Status::OK();
}

void PinnedBuffer::Release() {
  pool_->Give(region_);
  region_ = PinnedPool::Region{};
  data_ = nullptr;
  capacity_ = 0;
}

}  // namespace gpu
}  // namespace accelkv
