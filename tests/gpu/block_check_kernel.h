// CUDA kernel for block_check_test (built with ACCELKV_WITH_CUDA only):
// table/block_check.h's CheckBlockLayout run on the device, a thread per
// block, so the test can compare it with the CPU's on the same bytes.
//
// Thread safety: one test thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/key_sort_common.h"
#include "table/block_builder.h"
#include "table/block_check.h"

namespace accelkv {
namespace test {

// CheckBlockLayout of each span's contents arena[offset, offset + size) on
// the first CUDA device: its result and, where kOk, its layout (else the
// layout is left as BlockLayout()). False, with *reason, when there is no
// device (or a CUDA call fails).
bool CheckBlocksOnDevice(const std::vector<uint8_t>& arena,
                         const std::vector<gpu::BlockSpan>& spans, std::vector<BlockCheck>* checks,
                         std::vector<BlockLayout>* layouts, std::string* reason);

}  // namespace test
}  // namespace accelkv
