// Little-endian fixed-width loads from bytes of any alignment, for host
// code and CUDA kernels alike (nvcc compiles them as __host__ __device__):
// the block layout check (table/block_check.h) and the GPU's kernels
// (gpu/key_sort_common.h) share them. util/coding.h's DecodeFixed32 is the
// host-only form the rest of the code uses.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ACCELKV_FIXED_HD __host__ __device__
#else
#define ACCELKV_FIXED_HD
#endif

namespace accelkv {

ACCELKV_FIXED_HD inline uint32_t LoadFixed32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

}  // namespace accelkv
