#include "gpu/pinned_file_memory.h"

#include <mutex>
#include <new>
#include <unordered_set>

#if defined(ACCELKV_WITH_CUDA)
#include "gpu/pinned_buffer.h"
#endif

namespace accelkv {
namespace gpu {

namespace {

// Chunks straight from PinnedAllocate (page aligned: cudaHostAlloc, or
// huge pages registered from 4 MiB up), so a copy engine's transfers start
// on a page; ordinary memory, 4 KiB aligned, where pinning fails or there
// is no CUDA, remembered so that Free knows which it was.
class PinnedFileMemory final : public HostMemory {
 public:
  void* Allocate(size_t bytes) override {
#if defined(ACCELKV_WITH_CUDA)
    if (void* p = PinnedAllocate(bytes)) return p;
#endif
    void* p = ::operator new(bytes, kAlignment);
    std::lock_guard<std::mutex> l(mu_);
    ordinary_.insert(p);
    return p;
  }
  void Free(void* p, size_t bytes) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (ordinary_.erase(p) > 0) {
        ::operator delete(p, kAlignment);
        return;
      }
    }
#if defined(ACCELKV_WITH_CUDA)
    PinnedFree(p, bytes);
#else
    (void)bytes;
#endif
  }

 private:
  static constexpr std::align_val_t kAlignment{4096};
  std::mutex mu_;
  std::unordered_set<void*> ordinary_;  // chunks not pinned
};

}  // namespace

std::shared_ptr<HostMemory> NewPinnedFileMemory() { return std::make_shared<PinnedFileMemory>(); }

}  // namespace gpu
}  // namespace accelkv
