// The layout check of a data block's contents (docs/FORMAT.md, "Block"):
// footer, section sizes, and monotonic end offsets that stay inside the
// block. One definition for Block::Validate (table/block.h, which turns
// the result into a Status) and for CUDA kernels (compiled by nvcc as a
// __host__ __device__ function), so that a device checking blocks agrees
// with the CPU on every block by construction.
//
// Pure functions over the bytes given; thread-safe.
#pragma once

#include <cstdint>

#include "table/block_builder.h"
#include "util/fixed_load.h"

#if defined(__CUDACC__)
#define ACCELKV_BLOCK_HD __host__ __device__
#else
#define ACCELKV_BLOCK_HD
#endif

namespace accelkv {

// What CheckBlockLayout found; each failure's Status (BlockCheckStatus,
// table/block.h) is a Corruption with the message noted.
enum class BlockCheck : uint32_t {
  kOk = 0,
  kTooSmall,               // "block too small": under the 16-byte footer
  kBadEmpty,               // "bad empty block": n == 0 with other fields set
  kCountTooLarge,          // "block entry count too large": the arrays pass the block
  kKeyEndsNotMonotonic,    // "block end offsets not monotonic: keys"
  kValueEndsNotMonotonic,  // "block end offsets not monotonic: values"
  kSectionsDoNotFill,      // "block sections do not fill the block"
};

// End offset i of an end-offset array of `width` (2 or 4) bytes per entry.
ACCELKV_BLOCK_HD inline uint64_t BlockLoadEnd(const uint8_t* ends, uint32_t width, uint64_t i) {
  if (width == 2) return uint64_t{ends[2 * i]} | (uint64_t{ends[2 * i + 1]} << 8);
  return LoadFixed32(ends + 4 * i);
}

// The last of n end offsets, *total (0 when n == 0), when they never
// decrease; false otherwise.
ACCELKV_BLOCK_HD inline bool BlockEndsAscend(const uint8_t* ends, uint32_t width, uint64_t n,
                                             uint64_t* total) {
  uint64_t prev = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t e = BlockLoadEnd(ends, width, i);
    if (e < prev) return false;
    prev = e;
  }
  *total = prev;
  return true;
}

// Checks the contents data[0, size) of a block (without its trailer) and,
// when they are well formed, fills *layout (REQUIRES: layout not null).
// Reads only the footer and the end-offset arrays, every read inside
// [0, size): a block that passes has every section inside it, so its
// entries can be read without further bounds checks.
ACCELKV_BLOCK_HD inline BlockCheck CheckBlockLayout(const uint8_t* data, uint64_t size,
                                                    BlockLayout* layout) {
  if (size < BlockLayout::kFooterSize) return BlockCheck::kTooSmall;
  const uint8_t* footer = data + size - BlockLayout::kFooterSize;
  BlockLayout l;
  l.n = LoadFixed32(footer);
  l.prefix_size = LoadFixed32(footer + 4);
  l.key_width = LoadFixed32(footer + 8);
  l.value_width = LoadFixed32(footer + 12);
  l.offset_width = size <= BlockLayout::kMaxNarrowSize ? 2 : 4;
  l.size = size;
  const uint64_t n = l.n;
  const bool key_var = l.key_width == BlockLayout::kVariable;
  const bool value_var = l.value_width == BlockLayout::kVariable;
  if (n == 0 && (l.prefix_size != 0 || l.key_width != 0 || l.value_width != 0)) {
    return BlockCheck::kBadEmpty;
  }
  const uint64_t arrays = ((key_var ? 1 : 0) + (value_var ? 1 : 0)) * n * l.offset_width;
  if (arrays > size - BlockLayout::kFooterSize) return BlockCheck::kCountTooLarge;
  const uint64_t arrays_start = size - BlockLayout::kFooterSize - arrays;
  const uint8_t* key_ends = data + arrays_start;
  const uint8_t* value_ends = key_ends + (key_var ? n * l.offset_width : 0);
  if (key_var) {
    if (!BlockEndsAscend(key_ends, l.offset_width, n, &l.key_bytes)) {
      return BlockCheck::kKeyEndsNotMonotonic;
    }
  } else {
    l.key_bytes = n * l.key_width;  // < 2^64: both factors < 2^32
  }
  if (value_var) {
    if (!BlockEndsAscend(value_ends, l.offset_width, n, &l.value_bytes)) {
      return BlockCheck::kValueEndsNotMonotonic;
    }
  } else {
    l.value_bytes = n * l.value_width;
  }
  if (l.prefix_size > arrays_start || l.key_bytes > arrays_start - l.prefix_size ||
      l.value_bytes != arrays_start - l.prefix_size - l.key_bytes) {
    return BlockCheck::kSectionsDoNotFill;
  }
  *layout = l;
  return BlockCheck::kOk;
}

}  // namespace accelkv
