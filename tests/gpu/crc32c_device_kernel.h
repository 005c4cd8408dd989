// CUDA kernels for crc32c_device_test (built with ACCELKV_WITH_CUDA only):
// gpu/crc32c_device.h run by warps on the device, and a timing of the
// verify stage's thread-per-block kernel against a warp per block.
//
// Thread safety: one test thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/key_sort_common.h"

namespace accelkv {
namespace test {

struct WarpCrcKernelOutput {
  std::vector<uint32_t> crc;     // WarpCrc32c of each span's contents ++ type byte
  std::vector<uint8_t> ok;       // WarpBlockChecksumOk of each span
  std::vector<uint8_t> written;  // the arena, trailers zeroed, after WarpWriteBlockCrc
  bool tables_match = false;     // FillCrc32cTables on the device == InitCrc32cTables
};

// Runs one warp per span over arena on the first CUDA device. False, with
// *reason, when there is no device (or a CUDA call fails).
bool RunWarpCrcKernels(const std::vector<uint8_t>& arena, const std::vector<gpu::BlockSpan>& spans,
                       WarpCrcKernelOutput* out, std::string* reason);

struct WarpCrcTiming {
  uint64_t blocks = 0;
  uint64_t block_size = 0;  // contents bytes (+ 5 trailer bytes each)
  double thread_ms = 0;     // a thread per block, byte-wise (VerifyKernel's way)
  double warp_ms = 0;       // a warp per block, grid of resident thread blocks
  double warp_flat_ms = 0;  // a warp per block, a thread block per 8 blocks
  double warp_fill_ms = 0;  // as warp_ms, each thread block filling its own tables
  bool all_ok = false;      // every kernel found every block good
};

// Times verifying `blocks` valid blocks of block_size bytes (best of 5).
bool TimeWarpCrcKernels(uint64_t blocks, uint64_t block_size, WarpCrcTiming* t,
                        std::string* reason);

}  // namespace test
}  // namespace accelkv
