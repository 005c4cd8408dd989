#include "gpu/pinned_file_memory.h"

#include "gpu/host_vector.h"
#if defined(ACCELKV_WITH_CUDA)
#include "gpu/pinned_buffer.h"
#endif

namespace accelkv {
namespace gpu {

namespace {

class PinnedFileMemory final : public HostMemory {
 public:
  void* Allocate(size_t bytes) override { return HostAllocateBytes(bytes); }
  void Free(void* p, size_t /*bytes*/) override { HostFreeBytes(p); }
};

}  // namespace

std::shared_ptr<HostMemory> NewPinnedFileMemory() {
#if defined(ACCELKV_WITH_CUDA)
  InstallPinnedHostMemory();
#endif
  return std::make_shared<PinnedFileMemory>();
}

}  // namespace gpu
}  // namespace accelkv
