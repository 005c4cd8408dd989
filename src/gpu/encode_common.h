// Data-block encoding shared bit for bit by the CUDA kernel
// (EncodeBlocksKernel, encode_kernels.cuh) and the host reference
// (host_key_sort_device.cc).
//
// The CPU plans the output (output_planner.cc: which kept entries go to
// which table and data block, by TableBuilder's and OutputSplitter's rules,
// and each block's layout: shared prefix P, key and value widths,
// end-offset width W, section sizes). A block's entries are consecutive in
// the kept order, so a block is its first kept position and its count. The
// device then fills every data block independently from the arrays it still
// holds from the sort (docs/FORMAT.md, "Block"):
//   | prefix (P) | key suffixes (KS) | values (V) | key_ends (VAR keys only) |
//   | value_ends (VAR values only) | n, P, key_width, value_width (fixed32) |
// entry by entry it copies the key suffix and the value at the running ends
// of their sections and writes those ends (only for VAR sections); then the
// footer, the trailer's type byte and the masked CRC32C of contents ++ type
// ("Block trailer"). The prefix comes from the block's first key.
//
// Each table's bloom filter block is filled on the device too (EncodeFilter):
// the CPU plans its size (the count of its distinct user keys), the device
// zeroes its lines, sets each key's probe bits (table/bloom_probe.h, with
// XXH64 of the user key: xxh64_common.h) and writes its footer and trailer,
// right after the table's data blocks in the output buffer.
#pragma once

#include <cstdint>

#include "gpu/key_sort_common.h"
#include "gpu/xxh64_common.h"
#include "table/bloom_probe.h"

namespace accelkv {
namespace gpu {

inline constexpr uint64_t kBlockFooterSize = 16;

// One output data block: contents at out[out_offset, out_offset +
// EncodedBlockSize), then its 5-byte trailer.
struct EncodeBlock {
  uint64_t out_offset;
  uint64_t first;         // its first entry's kept position
  uint32_t n;             // entries, >= 1
  uint32_t prefix_size;   // P
  uint32_t key_width;     // suffix length of every entry, or kVariableWidth
  uint32_t value_width;   // value length of every entry, or kVariableWidth
  uint32_t offset_width;  // W: 2 or 4 bytes per end offset
  uint32_t key_bytes;     // KS: the key-suffix section
  uint32_t value_bytes;   // V: the value section
  // The full bytes of its table's index keys (each data block's last key)
  // up to and including this block's (tail_common.h, WriteIndexEntry).
  uint32_t index_key_end;
};

// One output table's filter block (docs/FORMAT.md, "Filter block"):
// contents at out[out_offset, out_offset + EncodedFilterSize), then its
// 5-byte trailer. Its keys are the user keys of its table's kept entries
// [first, end) that differ from their predecessor's (the table's first
// entry always counts): num_lines from their count.
struct EncodeFilter {
  uint64_t out_offset;
  uint64_t first;  // its table's kept positions [first, end)
  uint64_t end;
  uint32_t num_lines;   // >= 1
  uint32_t num_probes;  // 1..12
};

// Where a block's entries come from: kept[first + j] is entry j's index
// into the per-input-entry arrays (the key arena's keys, the file arena's
// values). Device pointers on the GPU, host pointers on the reference.
struct EncodeSources {
  const uint8_t* arena;      // file arena (values)
  const uint8_t* key_arena;  // internal keys
  const uint32_t* kept;      // output order
  const uint64_t* key_offset;
  const uint32_t* key_size;
  const uint64_t* value_offset;
  const uint32_t* value_size;
};

ACCELKV_HD inline uint64_t EncodedBlockSize(const EncodeBlock& b) {
  const uint64_t arrays =
      (b.key_width == kVariableWidth ? 1u : 0u) + (b.value_width == kVariableWidth ? 1u : 0u);
  return uint64_t{b.prefix_size} + b.key_bytes + b.value_bytes +
         arrays * b.n * uint64_t{b.offset_width} + kBlockFooterSize;
}

ACCELKV_HD inline uint64_t KeyEndsOffset(const EncodeBlock& b) {
  return uint64_t{b.prefix_size} + b.key_bytes + b.value_bytes;
}

ACCELKV_HD inline uint64_t ValueEndsOffset(const EncodeBlock& b) {
  return KeyEndsOffset(b) + (b.key_width == kVariableWidth ? uint64_t{b.n} * b.offset_width : 0);
}

// An end offset of `width` (2 or 4) bytes, little-endian.
ACCELKV_HD inline void StoreEnd(uint8_t* p, uint32_t width, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  if (width == 4) {
    p[2] = static_cast<uint8_t>(v >> 16);
    p[3] = static_cast<uint8_t>(v >> 24);
  }
}

// Copies block b's entries (kept positions [b.first, b.first + b.n)) into
// out: the prefix, each key suffix and value at its section's running end,
// and those ends for VAR sections (lane 0). Bytes [lane, ...) in steps of
// lanes (a warp's lanes on the device; 0 and 1 on the host).
ACCELKV_HD inline void EncodeBlockEntries(const EncodeSources& src, const EncodeBlock& b,
                                          uint8_t* out, uint32_t lane, uint32_t lanes) {
  uint8_t* const base = out + b.out_offset;
  uint8_t* const suffixes = base + b.prefix_size;
  uint8_t* const values = suffixes + b.key_bytes;
  uint8_t* const key_ends = base + KeyEndsOffset(b);
  uint8_t* const value_ends = base + ValueEndsOffset(b);
  uint64_t key_end = 0;
  uint64_t value_end = 0;
  for (uint32_t j = 0; j < b.n; ++j) {
    const uint32_t i = src.kept[b.first + j];
    const uint8_t* key = src.key_arena + src.key_offset[i];
    const uint32_t suffix = src.key_size[i] - b.prefix_size;
    const uint32_t value = src.value_size[i];
    if (j == 0) CopyStrided(base, key, b.prefix_size, lane, lanes);
    CopyStrided(suffixes + key_end, key + b.prefix_size, suffix, lane, lanes);
    CopyStrided(values + value_end, src.arena + src.value_offset[i], value, lane, lanes);
    key_end += suffix;
    value_end += value;
    if (lane == 0 && b.key_width == kVariableWidth) {
      StoreEnd(key_ends + uint64_t{j} * b.offset_width, b.offset_width,
               static_cast<uint32_t>(key_end));
    }
    if (lane == 0 && b.value_width == kVariableWidth) {
      StoreEnd(value_ends + uint64_t{j} * b.offset_width, b.offset_width,
               static_cast<uint32_t>(value_end));
    }
  }
}

// Writes the footer (n, P, key_width, value_width) and the trailer's type
// byte (kNone = 0).
ACCELKV_HD inline void WriteBlockFooter(uint8_t* out, const EncodeBlock& b) {
  const uint64_t size = EncodedBlockSize(b);
  uint8_t* footer = out + b.out_offset + size - kBlockFooterSize;
  StoreFixed32(footer, b.n);
  StoreFixed32(footer + 4, b.prefix_size);
  StoreFixed32(footer + 8, b.key_width);
  StoreFixed32(footer + 12, b.value_width);
  out[b.out_offset + size] = 0;
}

// The filter's contents: its lines, num_probes (1 byte), num_lines (fixed32).
ACCELKV_HD inline uint64_t EncodedFilterSize(const EncodeFilter& f) {
  return BloomFilterSize(f.num_lines);
}

// Writes the filter's footer (num_probes, num_lines) and its trailer's type
// byte (kNone = 0); the lines are zeroed separately.
ACCELKV_HD inline void WriteFilterFooter(uint8_t* out, const EncodeFilter& f) {
  uint8_t* footer = out + f.out_offset + uint64_t{f.num_lines} * kBloomLineBytes;
  footer[0] = static_cast<uint8_t>(f.num_probes);
  StoreFixed32(footer + 1, f.num_lines);
  footer[5] = 0;
}

// Whether kept position k (of filter f's table) adds its user key to the
// filter, and its hash: the table's first entry, or a user key other than
// kept position k - 1's (FilterBuilder::AddKey skips a repeated key).
ACCELKV_HD inline bool FilterKeyHash(const EncodeSources& src, const EncodeFilter& f, uint64_t k,
                                     uint64_t* hash) {
  const uint32_t i = src.kept[k];
  const uint8_t* key = src.key_arena + src.key_offset[i];
  const uint32_t user = src.key_size[i] - 8;
  if (k > f.first) {
    const uint32_t p = src.kept[k - 1];
    const uint8_t* prev = src.key_arena + src.key_offset[p];
    if (src.key_size[p] - 8 == user) {
      uint32_t s = 0;
      while (s < user && prev[s] == key[s]) ++s;
      if (s == user) return false;
    }
  }
  *hash = Xxh64(key, user);
  return true;
}

// The index of the filter whose table holds kept position k (filters
// ordered by first, their ranges disjoint), or nf when none does.
ACCELKV_HD inline uint64_t FilterOfKept(const EncodeFilter* filters, uint64_t nf, uint64_t k) {
  uint64_t lo = 0;
  uint64_t hi = nf;
  while (lo < hi) {  // the first filter with first > k
    const uint64_t mid = lo + (hi - lo) / 2;
    if (filters[mid].first <= k) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo > 0 && k < filters[lo - 1].end ? lo - 1 : nf;
}

}  // namespace gpu
}  // namespace accelkv
