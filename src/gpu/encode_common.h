// Data-block encoding shared bit for bit by the CUDA kernels
// (cuda_key_sort_device.cu) and the host reference (host_key_sort_device.cc).
//
// The CPU plans the output (device_encoder.cc): which kept entries go to
// which table and data block, by TableBuilder's and OutputSplitter's rules,
// and where each block and each entry's key and value land. The device then
// fills every data block independently: per entry it copies the key and the
// value and writes the two offset slots (docs/FORMAT.md, "Block"); per block
// it writes the closing slots, the entry count, the trailer's type byte and
// the masked CRC32C of contents ++ type ("Block trailer").
#pragma once

#include <cstdint>

#include "gpu/key_sort_common.h"

namespace accelkv {
namespace gpu {

// One output data block: contents at out[out_offset, out_offset + size),
// then its 5-byte trailer. size = key_bytes + value_bytes + 8 (n + 1) + 4.
struct EncodeBlock {
  uint64_t out_offset;
  uint32_t n;            // entries, >= 1
  uint32_t key_bytes;    // K: the keys section
  uint32_t value_bytes;  // V: the values section
};

// One entry of an output data block.
struct EncodeEntry {
  uint64_t key_src;    // arena offset of the internal key
  uint64_t value_src;  // arena offset of the value
  uint32_t key_size;
  uint32_t value_size;
  uint32_t block;      // index of its EncodeBlock
  uint32_t slot;       // its index within the block
  uint32_t key_dst;    // key_offsets[slot]: from the block's start
  uint32_t value_dst;  // value_offsets[slot]: from the block's start (>= K)
};

ACCELKV_HD inline uint64_t EncodedBlockSize(const EncodeBlock& b) {
  return uint64_t{b.key_bytes} + b.value_bytes + 8ull * (uint64_t{b.n} + 1) + 4;
}

ACCELKV_HD inline void StoreFixed32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

// Writes entry e's key_offsets and value_offsets slots.
ACCELKV_HD inline void WriteEntrySlots(uint8_t* out, const EncodeBlock& b, const EncodeEntry& e) {
  uint8_t* key_offsets = out + b.out_offset + b.key_bytes + b.value_bytes;
  uint8_t* value_offsets = key_offsets + 4ull * (uint64_t{b.n} + 1);
  StoreFixed32(key_offsets + 4ull * e.slot, e.key_dst);
  StoreFixed32(value_offsets + 4ull * e.slot, e.value_dst);
}

// Writes key_offsets[n] = K, value_offsets[n] = K + V, n, and the trailer's
// type byte (kNone = 0).
ACCELKV_HD inline void WriteBlockTail(uint8_t* out, const EncodeBlock& b) {
  uint8_t* key_offsets = out + b.out_offset + b.key_bytes + b.value_bytes;
  uint8_t* value_offsets = key_offsets + 4ull * (uint64_t{b.n} + 1);
  StoreFixed32(key_offsets + 4ull * b.n, b.key_bytes);
  StoreFixed32(value_offsets + 4ull * b.n, b.key_bytes + b.value_bytes);
  StoreFixed32(value_offsets + 4ull * (uint64_t{b.n} + 1), b.n);
  out[b.out_offset + EncodedBlockSize(b)] = 0;
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
