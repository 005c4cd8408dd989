// Data-block encoding shared bit for bit by the CUDA kernels
// (cuda_key_sort_device.cu) and the host reference (host_key_sort_device.cc).
//
// The CPU plans the output (device_encoder.cc): which kept entries go to
// which table and data block, by TableBuilder's and OutputSplitter's rules,
// each block's layout (BlockLayoutTracker: shared prefix P, key and value
// widths, end-offset width W, section sizes) and where each entry's key
// suffix and value land. The device then fills every data block
// independently (docs/FORMAT.md, "Block"):
//   | prefix (P) | key suffixes (KS) | values (V) | key_ends (VAR keys only) |
//   | value_ends (VAR values only) | n, P, key_width, value_width (fixed32) |
// per entry it copies the key suffix and the value and writes its end
// offsets (only for VAR sections); per block it writes the footer, the
// trailer's type byte and the masked CRC32C of contents ++ type ("Block
// trailer"). The prefix is written by the block's first entry: its whole key
// is the prefix followed by suffix 0, which starts the suffix section.
#pragma once

#include <cstdint>

#include "gpu/key_sort_common.h"

namespace accelkv {
namespace gpu {

inline constexpr uint64_t kBlockFooterSize = 16;

// One output data block: contents at out[out_offset, out_offset +
// EncodedBlockSize), then its 5-byte trailer.
struct EncodeBlock {
  uint64_t out_offset;
  uint64_t prefix_src;    // key-arena offset of its first key (holds the prefix)
  uint32_t n;             // entries, >= 1
  uint32_t prefix_size;   // P
  uint32_t key_width;     // suffix length of every entry, or kVariableWidth
  uint32_t value_width;   // value length of every entry, or kVariableWidth
  uint32_t offset_width;  // W: 2 or 4 bytes per end offset
  uint32_t key_bytes;     // KS: the key-suffix section
  uint32_t value_bytes;   // V: the value section
};

// One entry of an output data block.
struct EncodeEntry {
  uint64_t key_src;    // key-arena offset of the full internal key
  uint64_t value_src;  // file-arena offset of the value
  uint32_t key_size;   // full key (>= the block's P)
  uint32_t value_size;
  uint32_t block;      // index of its EncodeBlock
  uint32_t slot;       // its index within the block
  uint32_t key_dst;    // its suffix's offset in the suffix section
  uint32_t value_dst;  // its value's offset in the value section
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

// The bytes of entry e's key it writes: [KeySkip, key_size). Entry 0 writes
// its whole key (prefix ++ suffix 0, contiguous at the block's start), every
// other entry its suffix only.
ACCELKV_HD inline uint32_t KeySkip(const EncodeBlock& b, const EncodeEntry& e) {
  return e.slot == 0 ? 0 : b.prefix_size;
}

// Where in out those key bytes go.
ACCELKV_HD inline uint64_t KeyDst(const EncodeBlock& b, const EncodeEntry& e) {
  return b.out_offset + KeySkip(b, e) + e.key_dst;
}

ACCELKV_HD inline uint64_t ValueDst(const EncodeBlock& b, const EncodeEntry& e) {
  return b.out_offset + b.prefix_size + b.key_bytes + e.value_dst;
}

ACCELKV_HD inline void StoreFixed32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
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

// Writes entry e's key_ends and value_ends slots (those of VAR sections).
ACCELKV_HD inline void WriteEntryEnds(uint8_t* out, const EncodeBlock& b, const EncodeEntry& e) {
  const uint64_t slot = uint64_t{e.slot} * b.offset_width;
  if (b.key_width == kVariableWidth) {
    StoreEnd(out + b.out_offset + KeyEndsOffset(b) + slot, b.offset_width,
             e.key_dst + (e.key_size - b.prefix_size));
  }
  if (b.value_width == kVariableWidth) {
    StoreEnd(out + b.out_offset + ValueEndsOffset(b) + slot, b.offset_width,
             e.value_dst + e.value_size);
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

// Writes the masked CRC32C of contents ++ type after the type byte.
// REQUIRES: the block's contents and type byte are written.
ACCELKV_HD inline void WriteBlockCrc(const uint32_t* table, uint8_t* out, const EncodeBlock& b) {
  const uint64_t size = EncodedBlockSize(b);
  const uint32_t crc = ~Crc32cUpdate(table, 0xffffffffu, out + b.out_offset, size + 1);
  const uint32_t masked = ((crc >> 15) | (crc << 17)) + kCrcMaskDelta;
  StoreFixed32(out + b.out_offset + size + 1, masked);
}

}  // namespace gpu
}  // namespace accelkv
