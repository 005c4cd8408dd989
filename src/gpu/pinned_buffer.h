// Page-locked (pinned) host memory of the CUDA device: the mapping behind
// its large buffers and HostVector's storage, and PinnedBuffer, a buffer
// grown on demand and reused. CUDA builds only.
//
// The large buffers are anonymous memory marked for
// transparent huge pages (a hint: ordinary pages where the kernel has none),
// registered with cudaHostRegister, which faults it in and locks it. On the
// H100 machine (THP in madvise mode) 1 GiB took 0.27 CPU-s to map, fault in,
// register, unregister and unmap, against 0.74 with cudaHostAlloc and
// cudaFreeHost, and copied to the device at the same 54 GB/s
// (bench/results/2026-11-25-h100-stage-cpu.md); that memory is 2 MiB
// aligned. Below 4 MiB: cudaHostAlloc.
//
// Thread safety: the functions are safe to call from any thread; a
// PinnedBuffer is used by one.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "accelkv/env.h"
#include "accelkv/status.h"
#include "gpu/pinned_pool.h"

namespace accelkv {
namespace gpu {

// Pinned memory of at least `bytes` at *p (nullptr on failure).
cudaError_t PinnedMap(size_t bytes, void** p);

// Frees what PinnedMap(bytes) returned (p may be nullptr).
void PinnedUnmap(void* p, size_t bytes);

// Whether [p, p + size) lies inside one region PinnedMap returned and
// PinnedUnmap has not freed (a map lookup under a shared lock). The device's
// DirectHostMemory asks it before cudaPointerGetAttributes, whose two calls
// a piece cost 1-2 us: a key-first job asks of several hundred pieces
// (docs/GPU.md, "Staging groups").
bool KnownPinned(const void* p, size_t size);

// HostVector's pinned storage (host_vector.h, PinnedHostMemory): PinnedMap,
// nullptr where it fails (the error cleared: HostVector falls back to
// ordinary memory), and PinnedUnmap.
void* PinnedAllocate(size_t bytes);
void PinnedFree(void* p, size_t bytes);

// The process's pool of pinned regions (pinned_pool.h): every
// PinnedBuffer's memory comes from it and goes back to it.
PinnedPool& ProcessPinnedPool();

// A pinned host buffer grown on demand and reused, 4 KiB aligned: the file
// arena takes O_DIRECT reads straight into it (job_input.cc, direct reads)
// and the output buffer feeds O_DIRECT writes straight from it
// (device_encoder.cc, direct writes). Its memory is a region of the
// process's PinnedPool (PinnedMap's memory); cudaHostAlloc (small regions)
// returns page-aligned memory in practice; should it not, the buffer takes
// a region 4 KiB larger and uses it from its first aligned byte. Pinning
// and unpinning cost CPU time in proportion to the bytes, and a database's
// jobs grow a little at a time as its levels fill: re-pinning the output
// buffer for each new largest job took 1.0 of the executor's 5.8 CPU-s in
// a 20M-key fillrandom under stress (bench/results/2026-11-25-h100-stage-cpu.md).
// So it grows by at least half its size (to a multiple of 64 KiB; exactly
// when that much cannot be pinned), which bounds the bytes pinned over all
// growth to about 3x the largest job. Release gives the region back to the
// pool at a job's end (KeySortDevice::ReleaseHostBuffers); the next Get
// asks the pool for the size the buffer had, which it most likely still
// holds.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(PinnedPool* pool = &ProcessPinnedPool()) : pool_(pool) { pool_->Attach(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    Release();
    pool_->Detach();
  }
  // A buffer of at least `bytes` (the same one while it is large enough;
  // its bytes are not kept when it grows); a failure is CudaFailure(stage).
  Status Get(uint64_t bytes, const char* stage, uint8_t** p);
  // Gives the memory back to the pool; the next Get takes a region again.
  // Nothing may still read or write the buffer (no copy in flight).
  void Release();

 private:
  static constexpr uintptr_t kAlignment = kDirectIoAlignment;
  static constexpr uint64_t kGrowthUnit = uint64_t{64} << 10;
  PinnedPool* const pool_;
  PinnedPool::Region region_;  // held from pool_ (p nullptr: none)
  uint8_t* data_ = nullptr;    // its first 4 KiB-aligned byte
  uint64_t capacity_ = 0;      // from data_ (0: none held)
  uint64_t size_ = 0;          // the bytes it asks the pool for (grown), kept across Release
};

}  // namespace gpu
}  // namespace accelkv
