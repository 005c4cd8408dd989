// Input decoding shared bit for bit by the CUDA kernels (CheckBlocksKernel,
// WriteDecodeBlocksKernel, DecodeKeysKernel: decode_kernels.cuh), the host
// reference (host_key_sort_device.cc) and the CPU's reader threads.
//
// Every input data block is checked first (CheckDataBlock: its trailer,
// then CheckBlockLayout's footer, sections and end-offset arrays, so every
// entry lies inside its block whatever the bytes; on the device in
// device-encode mode, KeySortDevice::CheckBlocks, on the CPU in keys-only
// mode), and the key arena is laid out: block b's keys start at key_base =
// the sum of n * P + KS of the blocks before it, its entries are numbered
// from first_entry (BlockSums, scanned). Then entry j of block b is decoded
// on its own (docs/FORMAT.md, "Block": fixed widths or end offsets make
// every entry directly addressable): its internal key, prefix ++ suffix_j,
// goes to key_arena[key_base + j * P + suffix_begin_j] (the order and
// offsets the CPU decoder used), and its value is located in the file arena.
#pragma once

#include <algorithm>
#include <cstdint>

#include "gpu/key_sort_common.h"
#include "table/block_check.h"

namespace accelkv {
namespace gpu {

// A validated input data block.
struct DecodeBlock {
  uint64_t offset;       // its contents, in the file arena
  uint64_t key_base;     // its first key, in the key arena
  uint64_t first_entry;  // index of its first entry
  uint64_t key_bytes;    // KS: the key-suffix section
  uint32_t n;
  uint32_t prefix_size;   // P
  uint32_t key_width;     // kVariableWidth (0xffffffff): key_ends present
  uint32_t value_width;   // likewise for value_ends
  uint32_t offset_width;  // W: 2 or 4
  uint32_t value_bytes;   // V (a block is under 4 GiB)
};

// The DecodeBlock of a data block whose layout check passed, its contents
// at `offset` in the file arena, its keys at key_base in the key arena, its
// first entry numbered first_entry.
ACCELKV_HD inline DecodeBlock MakeDecodeBlock(uint64_t offset, const BlockLayout& l,
                                              uint64_t key_base, uint64_t first_entry) {
  DecodeBlock d;
  d.offset = offset;
  d.key_base = key_base;
  d.first_entry = first_entry;
  d.key_bytes = l.key_bytes;
  d.n = l.n;
  d.prefix_size = l.prefix_size;
  d.key_width = l.key_width;
  d.value_width = l.value_width;
  d.offset_width = l.offset_width;
  d.value_bytes = static_cast<uint32_t>(l.value_bytes);  // the check: under the block's size
  return d;
}

// What CheckDataBlock found: 0 (kDataBlockOk), a BlockCheck code of the
// layout (1-6), or one of the two checks on a data block beyond its layout.
constexpr uint32_t kDataBlockOk = 0;
constexpr uint32_t kDataBlockCompressed = 100;   // "unsupported compression"
constexpr uint32_t kDataBlockTooManyKeys = 101;  // "data block has more entries than distinct keys"

// The input data block whose contents are contents[0, size), followed by
// its trailer (REQUIRES: contents[size] readable): the trailer names no
// compression, the layout passes CheckBlockLayout (*l then filled), and it
// has at most one entry more than key-suffix bytes. Keys of a block are
// distinct and share the prefix, so at most one suffix is empty: this
// bounds the key arena (n * P + KS) by the file bytes' square. The checks
// in that order, on the CPU (JobInput's reader threads, keys-only mode)
// and on the device (KeySortDevice::CheckBlocks), so both find the same.
ACCELKV_HD inline uint32_t CheckDataBlock(const uint8_t* contents, uint64_t size, BlockLayout* l) {
  if (contents[size] != 0) return kDataBlockCompressed;
  const BlockCheck check = CheckBlockLayout(contents, size, l);
  if (check != BlockCheck::kOk) return static_cast<uint32_t>(check);
  if (l->n > l->key_bytes + 1) return kDataBlockTooManyKeys;
  return kDataBlockOk;
}

// The internal-key size of every entry of a checked block when its keys
// have a fixed width (P + width, under 2^32), else 0.
ACCELKV_HD inline uint64_t FixedKeySize(const BlockLayout& l) {
  if (l.key_width == BlockLayout::kVariable) return 0;
  const uint64_t size = uint64_t{l.prefix_size} + l.key_width;
  return size > 0xffffffffull ? 0 : size;
}

// Running sums over checked data blocks (KeySortDevice::CheckBlocks' scan):
// the blocks with entries, their entries and their keys' bytes in the key
// arena (n * P + KS each).
struct BlockSums {
  uint64_t blocks;
  uint64_t entries;
  uint64_t key_bytes;
};

// A checked block's share of BlockSums (all zero for a block that failed
// its check or has no entries).
ACCELKV_HD inline BlockSums BlockShare(uint32_t code, const BlockLayout& l) {
  if (code != kDataBlockOk || l.n == 0) return BlockSums{0, 0, 0};
  return BlockSums{1, l.n, uint64_t{l.n} * l.prefix_size + l.key_bytes};
}

struct AddBlockSums {
  ACCELKV_HD BlockSums operator()(const BlockSums& a, const BlockSums& b) const {
    return BlockSums{a.blocks + b.blocks, a.entries + b.entries, a.key_bytes + b.key_bytes};
  }
};

// Where entry j of a block and its internal key go.
struct DecodedEntry {
  uint64_t suffix_src;  // its key suffix, in the file arena
  uint32_t suffix_size;
  uint64_t key_offset;    // its whole key, in the key arena
  uint32_t key_size;      // P + suffix_size
  uint64_t value_offset;  // in the file arena
  uint32_t value_size;
};

// The block holding entry `entry`: the last block whose first_entry <= entry
// (a block with no entries shares its first_entry with the next one).
// REQUIRES: nb >= 1, blocks[0].first_entry == 0, entry < total entries.
ACCELKV_HD inline uint64_t BlockOfEntry(const DecodeBlock* blocks, uint64_t nb, uint64_t entry) {
  return LastAtOrBefore(nb, entry, [blocks](uint64_t i) { return blocks[i].first_entry; });
}

// A block's average key size, rounded up: its prefix plus its suffixes'
// average (0 for a block without entries).
ACCELKV_HD inline uint64_t AverageKeySize(const DecodeBlock& b) {
  return b.n == 0 ? 0 : b.prefix_size + (b.key_bytes + b.n - 1) / b.n;
}

// The lanes that materialize one entry's key on the GPU (DecodeKeysKernel):
// the smallest power of two up to 32 that gives each lane at most 8 bytes
// of key, the largest AverageKeySize of any block. Only a speed choice: any
// number of lanes copies the same bytes (MaterializeKey).
ACCELKV_HD inline uint32_t DecodeLanesForKeySize(uint64_t key) {
  uint32_t lanes = 1;
  while (lanes < 32 && uint64_t{lanes} * 8 < key) lanes *= 2;
  return lanes;
}

// ...of the blocks [blocks, blocks + nb).
inline uint32_t DecodeLanesPerEntry(const DecodeBlock* blocks, uint64_t nb) {
  uint64_t key = 0;
  for (uint64_t i = 0; i < nb; ++i) key = std::max(key, AverageKeySize(blocks[i]));
  return DecodeLanesForKeySize(key);
}

// [*b, *e) of entry j within a section of this width (or its end offsets).
ACCELKV_HD inline void SectionBounds(const uint8_t* ends, uint32_t width, uint32_t offset_width,
                                     uint32_t j, uint64_t* b, uint64_t* e) {
  if (width != kVariableWidth) {
    *b = uint64_t{j} * width;
    *e = *b + width;
  } else {
    *b = j == 0 ? 0 : BlockLoadEnd(ends, offset_width, j - 1);
    *e = BlockLoadEnd(ends, offset_width, j);
  }
}

// Locates entry j (< b.n) of block b; arena is the file arena.
ACCELKV_HD inline DecodedEntry LocateEntry(const uint8_t* arena, const DecodeBlock& b, uint32_t j) {
  const uint8_t* data = arena + b.offset;
  const uint64_t values = uint64_t{b.prefix_size} + b.key_bytes;
  const uint64_t key_ends = values + b.value_bytes;
  const uint64_t value_ends =
      key_ends + (b.key_width == kVariableWidth ? uint64_t{b.n} * b.offset_width : 0);
  uint64_t kb, ke, vb, ve;
  SectionBounds(data + key_ends, b.key_width, b.offset_width, j, &kb, &ke);
  SectionBounds(data + value_ends, b.value_width, b.offset_width, j, &vb, &ve);
  DecodedEntry d;
  d.suffix_src = b.offset + b.prefix_size + kb;
  d.suffix_size = static_cast<uint32_t>(ke - kb);
  d.key_offset = b.key_base + uint64_t{j} * b.prefix_size + kb;
  d.key_size = b.prefix_size + d.suffix_size;
  d.value_offset = b.offset + values + vb;
  d.value_size = static_cast<uint32_t>(ve - vb);
  return d;
}

// Materializes entry d's key (block b's prefix ++ its suffix) into the key
// arena, the bytes [lane, ...) in steps of lanes.
ACCELKV_HD inline void MaterializeKey(const uint8_t* arena, uint8_t* key_arena,
                                      const DecodeBlock& b, const DecodedEntry& d, uint32_t lane,
                                      uint32_t lanes) {
  uint8_t* key = key_arena + d.key_offset;
  CopyStrided(key, arena + b.offset, b.prefix_size, lane, lanes);
  CopyStrided(key + b.prefix_size, arena + d.suffix_src, d.suffix_size, lane, lanes);
}

// ParseInternalKey's check on entry d's key, read from the file arena (so
// it needs no other lane's copy): at least the 8-byte trailer, and a known
// type (kDeletion 0 or kValue 1) in its low byte.
ACCELKV_HD inline bool InternalKeyOk(const uint8_t* arena, const DecodeBlock& b,
                                     const DecodedEntry& d) {
  if (d.key_size < 8) return false;
  const uint64_t type_at = d.key_size - 8;  // in the key
  const uint8_t type = type_at < b.prefix_size ? arena[b.offset + type_at]
                                               : arena[d.suffix_src + (type_at - b.prefix_size)];
  return type <= 1;
}

}  // namespace gpu
}  // namespace accelkv
