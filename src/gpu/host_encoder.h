// The planned output tables encoded on the CPU (docs/GPU.md, "Encode
// modes"): keys-only mode, where only keys cross to the device and back,
// and the host reference device's EncodeBlocks. The same functions the
// kernels run (encode_common.h: data blocks and filters; tail_common.h:
// index and properties blocks, footers) over host arenas, with the CRC32C
// by the CPU's instruction (util/crc32c.h) instead of the device's tables.
//
// Thread safety: one call at a time per output buffer; the call's threads
// write disjoint bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/key_sort_device.h"

namespace accelkv {
namespace gpu {

// Fills job.blocks[first_block, end_block), their tables' filters
// (FiltersOfBlocks) and their tables' tails (TablesOfBlocks) into out, as
// KeySortDevice::EncodeBlocks does, from src (host arenas and entry arrays,
// the kept order), on up to `threads` threads (the caller is one). Returns
// the helpers' CPU seconds. REQUIRES: CheckEncodeJob(job, first_block,
// end_block, kept entries) is OK.
double EncodeOnHost(const EncodeJob& job, const EncodeSources& src, uint64_t first_block,
                    uint64_t end_block, uint8_t* out, size_t threads);

// Writes the masked CRC32C of out[offset, offset + size + 1) (a block's
// contents ++ its type byte) after the type byte, as the kernels do
// (WarpWriteBlockCrc), by the CPU's instruction.
void WriteTrailerCrcOnHost(uint8_t* out, uint64_t offset, uint64_t size);

}  // namespace gpu
}  // namespace accelkv
