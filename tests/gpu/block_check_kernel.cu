// See block_check_kernel.h.
#include "gpu/block_check_kernel.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace accelkv {
namespace test {

namespace {

__global__ void CheckBlocksKernel(const uint8_t* arena, const gpu::BlockSpan* spans, uint64_t n,
                                  BlockCheck* checks, BlockLayout* layouts) {
  const uint64_t b = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (b >= n) return;
  BlockLayout l;
  checks[b] = CheckBlockLayout(arena + spans[b].offset, spans[b].size, &l);
  layouts[b] = l;
}

// cudaMalloc'd bytes, freed with the object.
class DeviceBytes {
 public:
  ~DeviceBytes() { cudaFree(p_); }
  cudaError_t Alloc(size_t bytes) { return cudaMalloc(&p_, std::max<size_t>(bytes, 1)); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
};

}  // namespace

bool CheckBlocksOnDevice(const std::vector<uint8_t>& arena,
                         const std::vector<gpu::BlockSpan>& spans, std::vector<BlockCheck>* checks,
                         std::vector<BlockLayout>* layouts, std::string* reason) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    *reason = std::string("no CUDA device: ") +
              (e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
    return false;
  }
  const uint64_t n = spans.size();
  DeviceBytes d_arena, d_spans, d_checks, d_layouts;
  if ((e = d_arena.Alloc(arena.size())) != cudaSuccess ||
      (e = d_spans.Alloc(n * sizeof(gpu::BlockSpan))) != cudaSuccess ||
      (e = d_checks.Alloc(n * sizeof(BlockCheck))) != cudaSuccess ||
      (e = d_layouts.Alloc(n * sizeof(BlockLayout))) != cudaSuccess ||
      (e = cudaMemcpy(d_arena.as<uint8_t>(), arena.data(), arena.size(), cudaMemcpyHostToDevice)) !=
          cudaSuccess ||
      (e = cudaMemcpy(d_spans.as<gpu::BlockSpan>(), spans.data(), n * sizeof(gpu::BlockSpan),
                      cudaMemcpyHostToDevice)) != cudaSuccess) {
    *reason = std::string("cuda: ") + cudaGetErrorString(e);
    return false;
  }
  const unsigned int threads = 128;
  const auto grid = static_cast<unsigned int>(std::max<uint64_t>(1, (n + threads - 1) / threads));
  CheckBlocksKernel<<<grid, threads>>>(d_arena.as<uint8_t>(), d_spans.as<gpu::BlockSpan>(), n,
                                       d_checks.as<BlockCheck>(), d_layouts.as<BlockLayout>());
  checks->resize(n);
  layouts->resize(n);
  if ((e = cudaGetLastError()) != cudaSuccess || (e = cudaDeviceSynchronize()) != cudaSuccess ||
      (e = cudaMemcpy(checks->data(), d_checks.as<BlockCheck>(), n * sizeof(BlockCheck),
                      cudaMemcpyDeviceToHost)) != cudaSuccess ||
      (e = cudaMemcpy(layouts->data(), d_layouts.as<BlockLayout>(), n * sizeof(BlockLayout),
                      cudaMemcpyDeviceToHost)) != cudaSuccess) {
    *reason = std::string("cuda: ") + cudaGetErrorString(e);
    return false;
  }
  return true;
}

}  // namespace test
}  // namespace accelkv
