// HostVector: a std::vector whose storage the device can copy into and out
// of at full speed. Once a CUDA device installed its pinned-memory
// functions (SetPinnedHostMemory), new storage is page-locked
// (cudaHostAlloc): a copy between such an array and the GPU runs
// asynchronously at the bus's rate, while one to or from ordinary pages goes
// through the driver's bounce buffer, synchronously and at a fraction of the
// rate. Without a device (or when pinning fails) storage is ordinary. Each
// allocation records how it was made, so storage allocated before or after
// SetPinnedHostMemory is freed correctly either way.
//
// The executor keeps its per-entry arrays (key offsets and sizes, value
// places, flags, the kept order) in HostVectors reused from job to job, so
// the costly pinning happens only when an array grows.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace accelkv {
namespace gpu {

// Page-locked host memory: allocate returns nullptr on failure; free gets
// the bytes its allocate call was asked for.
struct PinnedHostMemory {
  void* (*allocate)(size_t bytes) = nullptr;
  void (*free)(void* p, size_t bytes) = nullptr;
};

// Installs the functions every later HostAllocateBytes uses (thread safe;
// the last call wins) and returns the ones it replaces. Storage already
// allocated keeps its own.
PinnedHostMemory SetPinnedHostMemory(PinnedHostMemory memory);

// At least bytes of host memory aligned to 64 bytes, pinned when possible;
// throws std::bad_alloc when none is left.
void* HostAllocateBytes(size_t bytes);
// Frees what HostAllocateBytes returned (nullptr: nothing).
void HostFreeBytes(void* p);
// Whether p (from HostAllocateBytes) is page-locked. For tests.
bool HostBytesPinned(const void* p);

template <typename T>
struct HostAllocator {
  using value_type = T;
  HostAllocator() = default;
  template <typename U>
  HostAllocator(const HostAllocator<U>& /*other*/) {}  // NOLINT: allocators convert implicitly
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(HostAllocateBytes(n * sizeof(T)));
  }
  void deallocate(T* p, size_t /*n*/) { HostFreeBytes(p); }
  template <typename U>
  bool operator==(const HostAllocator<U>& /*other*/) const {
    return true;
  }
};

template <typename T>
using HostVector = std::vector<T, HostAllocator<T>>;

}  // namespace gpu
}  // namespace accelkv
