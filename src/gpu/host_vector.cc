#include "gpu/host_vector.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace accelkv {
namespace gpu {

namespace {

std::atomic<void* (*)(size_t)> g_pinned_allocate{nullptr};
std::atomic<void (*)(void*, size_t)> g_pinned_free{nullptr};

// Every allocation starts with this header (kHeader bytes, keeping the
// caller's bytes 64-byte aligned): the function that frees it, or nullptr
// for ordinary memory (std::free), and the bytes allocated with it.
constexpr size_t kHeader = 64;
struct Header {
  void (*free)(void*, size_t);
  size_t bytes;
};

}  // namespace

PinnedHostMemory SetPinnedHostMemory(PinnedHostMemory memory) {
  // The free function first: an allocation made with the new allocate
  // always finds its matching free.
  PinnedHostMemory old;
  old.free = g_pinned_free.exchange(memory.free);
  old.allocate = g_pinned_allocate.exchange(memory.allocate);
  return old;
}

void* HostAllocateBytes(size_t bytes) {
  if (bytes > static_cast<size_t>(-1) - kHeader) throw std::bad_alloc();
  const size_t total = bytes + kHeader;
  void* raw = nullptr;
  void (*free_fn)(void*, size_t) = nullptr;
  void* (*allocate)(size_t) = g_pinned_allocate.load();
  if (allocate != nullptr) {
    raw = allocate(total);  // page aligned
    if (raw != nullptr) free_fn = g_pinned_free.load();
  }
  if (raw == nullptr) {
    raw = std::aligned_alloc(kHeader, (total + kHeader - 1) / kHeader * kHeader);
    if (raw == nullptr) throw std::bad_alloc();
  }
  static_cast<Header*>(raw)->free = free_fn;
  static_cast<Header*>(raw)->bytes = total;
  return static_cast<uint8_t*>(raw) + kHeader;
}

void HostFreeBytes(void* p) {
  if (p == nullptr) return;
  void* raw = static_cast<uint8_t*>(p) - kHeader;
  const Header* header = static_cast<Header*>(raw);
  if (header->free != nullptr) {
    header->free(raw, header->bytes);
  } else {
    std::free(raw);
  }
}

bool HostBytesPinned(const void* p) {
  return static_cast<const Header*>(
             static_cast<const void*>(static_cast<const uint8_t*>(p) - kHeader))
             ->free != nullptr;
}

}  // namespace gpu
}  // namespace accelkv
