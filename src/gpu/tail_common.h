// Table tails shared bit for bit by the CUDA kernel (TableTailsKernel,
// encode_kernels.cuh) and the host reference (host_key_sort_device.cc):
// after a table's data blocks and filter block, its properties block, its
// index block and its footer (docs/FORMAT.md, "Table"), so the device
// returns every output table whole and the CPU only writes it.
//
// The CPU plan (output_planner.cc) decides what is in a table and computes
// what the tail's sizes depend on: the index block's layout (its keys are
// the data blocks' last keys: shared prefix P, key width, end-offset width,
// suffix bytes; each data block's running sum of the table's index key
// bytes, EncodeBlock::index_key_end), the properties' numbers (summed from
// the device's block records) and the sizes of the comparator name and of
// the table's first and last keys. The device then writes, from the key
// arena and the kept order it still holds:
//   index block       one entry per data block: its last key's suffix at
//                     the running end (the first key also writes the
//                     prefix), its BlockHandle (fixed64 offset in the
//                     table, fixed64 size), the key's end (VAR keys only);
//   properties block  the 11 entries of table/property_names.h;
//   footer            the three handles, format version 2, its CRC32C,
//                     the magic;
// and each block's trailer (type byte, masked CRC32C).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "gpu/encode_common.h"
#include "table/property_names.h"

namespace accelkv {
namespace gpu {

inline constexpr uint64_t kTrailerBytes = 5;                    // kBlockTrailerSize
inline constexpr uint64_t kHandleBytes = 16;                    // BlockHandle::kEncodedLength
inline constexpr uint64_t kTableFooterBytes = 64;               // Footer::kEncodedLength
inline constexpr uint32_t kTableFormatVersion = 2;              // Footer::kFormatVersion
inline constexpr uint64_t kTableMagic = 0x4c42544b4c454341ull;  // Footer::kMagic

// One output table's tail. The table's bytes are out[out_offset,
// out_offset + TableFileSize): its data blocks (EncodeJob::blocks[
// first_block, end_block)), its filter block (filter_size > 0), then the
// tail.
struct EncodeTable {
  uint64_t out_offset;
  uint64_t first_block;  // >= 1 data block
  uint64_t end_block;
  uint64_t data_bytes;   // its data blocks with their trailers
  uint64_t filter_size;  // the filter block's contents (0: no filter)
  // The properties' numbers (docs/FORMAT.md, "Properties block"); the two
  // keys are the first block's first entry's and the last block's last
  // entry's (sizes below).
  uint64_t num_entries;
  uint64_t num_deletions;
  uint64_t raw_key_bytes;
  uint64_t raw_value_bytes;
  uint64_t smallest_seqno;
  uint64_t largest_seqno;
  uint32_t smallest_key_size;
  uint32_t largest_key_size;
  uint32_t comparator_size;  // the job's comparator name (EncodeJob::comparator)
  // The index block's layout (n = end_block - first_block entries; values:
  // 16-byte handles, so fixed width).
  uint32_t index_prefix;        // P
  uint32_t index_key_width;     // suffix length of every key, or kVariableWidth
  uint32_t index_offset_width;  // W
  uint64_t index_key_bytes;     // KS
};

// The properties block's layout (BlockLayout of EncodePropertiesBlock's
// entries): names after the shared "accelkv." prefix, of differing lengths;
// values of 8 bytes but for the comparator name and the two keys.
ACCELKV_HD inline EncodeBlock PropertiesLayout(const EncodeTable& t) {
  EncodeBlock l{};
  l.n = kNumTableProperties;
  l.prefix_size = kTablePropertyPrefix;
  l.key_width = kVariableWidth;
  uint32_t key_bytes = 0;
  for (int p = 0; p < kNumTableProperties; ++p) key_bytes += TablePropertyNameSize(p);
  l.key_bytes = key_bytes - kNumTableProperties * kTablePropertyPrefix;
  const bool all_eight =
      t.comparator_size == 8 && t.smallest_key_size == 8 && t.largest_key_size == 8;
  l.value_width = all_eight ? 8 : kVariableWidth;
  l.value_bytes =
      8 * (kNumTableProperties - 3) + t.comparator_size + t.smallest_key_size + t.largest_key_size;
  // BlockLayout::ComputeSize: 2-byte end offsets while the block stays
  // within 65535 bytes with them.
  const uint64_t arrays = 1 + (all_eight ? 0 : 1);
  const uint64_t narrow = uint64_t{l.prefix_size} + l.key_bytes + l.value_bytes + kBlockFooterSize +
                          2 * uint64_t{l.n} * arrays;
  l.offset_width = narrow <= 0xffff ? 2 : 4;
  return l;
}

ACCELKV_HD inline uint64_t PropertiesOffset(const EncodeTable& t) {
  return t.data_bytes + (t.filter_size > 0 ? t.filter_size + kTrailerBytes : 0);
}

ACCELKV_HD inline uint64_t IndexOffset(const EncodeTable& t) {
  return PropertiesOffset(t) + EncodedBlockSize(PropertiesLayout(t)) + kTrailerBytes;
}

// The index block's layout, at its place in the output buffer.
ACCELKV_HD inline EncodeBlock IndexLayout(const EncodeTable& t) {
  EncodeBlock l{};
  l.out_offset = t.out_offset + IndexOffset(t);
  l.n = static_cast<uint32_t>(t.end_block - t.first_block);
  l.prefix_size = t.index_prefix;
  l.key_width = t.index_key_width;
  l.value_width = static_cast<uint32_t>(kHandleBytes);
  l.offset_width = t.index_offset_width;
  l.key_bytes = static_cast<uint32_t>(t.index_key_bytes);
  l.value_bytes = static_cast<uint32_t>(kHandleBytes * l.n);
  return l;
}

ACCELKV_HD inline uint64_t FooterOffset(const EncodeTable& t) {
  return IndexOffset(t) + EncodedBlockSize(IndexLayout(t)) + kTrailerBytes;
}

ACCELKV_HD inline uint64_t TableFileSize(const EncodeTable& t) {
  return FooterOffset(t) + kTableFooterBytes;
}

ACCELKV_HD inline void StoreFixed64(uint8_t* p, uint64_t v) {
  StoreFixed32(p, static_cast<uint32_t>(v));
  StoreFixed32(p + 4, static_cast<uint32_t>(v >> 32));
}

// Kept entry k's internal key in the key arena, and its size.
ACCELKV_HD inline const uint8_t* KeptKey(const EncodeSources& src, uint64_t k, uint32_t* size) {
  const uint32_t i = src.kept[k];
  *size = src.key_size[i];
  return src.key_arena + src.key_offset[i];
}

// Index entry i of table t (blocks: the table's data blocks, blocks[0] its
// first): block i's last key's suffix at the running end (entry 0 also
// writes the prefix), its handle, and for VAR keys its end.
ACCELKV_HD inline void WriteIndexEntry(const EncodeSources& src, const EncodeBlock* blocks,
                                       const EncodeTable& t, uint64_t i, uint8_t* out) {
  const EncodeBlock l = IndexLayout(t);
  const EncodeBlock& b = blocks[i];
  uint32_t size = 0;
  const uint8_t* key = KeptKey(src, b.first + b.n - 1, &size);
  uint8_t* const base = out + l.out_offset;
  const uint64_t p = l.prefix_size;
  // index_key_end: the table's index keys' full bytes up to this one
  // (CheckEncodeJob keeps end within the section). A key shorter than the
  // plan says writes nothing rather than outside its place (the plan took
  // the sizes from the device's own arrays, so this is never so).
  const uint64_t end = b.index_key_end - (i + 1) * p;
  if (size < p || size - p > end) return;
  const uint64_t suffix = size - p;
  if (i == 0) CopyStrided(base, key, p, 0, 1);
  CopyStrided(base + p + end - suffix, key + p, suffix, 0, 1);
  uint8_t* handle = base + p + l.key_bytes + kHandleBytes * i;
  StoreFixed64(handle, b.out_offset - t.out_offset);
  StoreFixed64(handle + 8, EncodedBlockSize(b));
  if (l.key_width == kVariableWidth) {
    StoreEnd(base + KeyEndsOffset(l) + i * l.offset_width, l.offset_width,
             static_cast<uint32_t>(end));
  }
}

// The properties block's contents and the trailer's type byte, by one
// thread (EncodePropertiesBlock's bytes): the keys come from the first
// block's first entry and the last block's last entry.
ACCELKV_HD inline void WritePropertiesBlock(const EncodeSources& src, const EncodeBlock* blocks,
                                            const EncodeTable& t, const uint8_t* comparator,
                                            uint8_t* out) {
  EncodeBlock l = PropertiesLayout(t);
  l.out_offset = t.out_offset + PropertiesOffset(t);
  uint8_t* const base = out + l.out_offset;
  const EncodeBlock& last = blocks[t.end_block - t.first_block - 1];
  uint32_t smallest_size = 0;
  uint32_t largest_size = 0;
  const uint8_t* smallest = KeptKey(src, blocks[0].first, &smallest_size);
  const uint8_t* largest = KeptKey(src, last.first + last.n - 1, &largest_size);
  // The layout took the keys' sizes from the plan (WriteIndexEntry).
  if (smallest_size != t.smallest_key_size || largest_size != t.largest_key_size) return;
  const uint64_t numbers[kNumTableProperties] = {
      0,
      t.data_bytes,
      0,
      t.largest_seqno,
      t.end_block - t.first_block,
      t.num_deletions,
      t.num_entries,
      t.raw_key_bytes,
      t.raw_value_bytes,
      0,
      t.smallest_seqno,
  };
  uint64_t key_end = 0;
  uint64_t value_end = 0;
  uint8_t* const values = base + l.prefix_size + l.key_bytes;
  for (int p = 0; p < kNumTableProperties; ++p) {
    // The name's bytes up to its NUL: the prefix (first entry), the suffix.
    const char* name = TablePropertyName(p);
    uint32_t c = p == 0 ? 0 : l.prefix_size;
    for (; name[c] != '\0'; ++c) {
      if (c < l.prefix_size) {
        base[c] = static_cast<uint8_t>(name[c]);
      } else {
        base[l.prefix_size + key_end++] = static_cast<uint8_t>(name[c]);
      }
    }
    if (p == kPropertyComparator) {
      CopyStrided(values + value_end, comparator, t.comparator_size, 0, 1);
      value_end += t.comparator_size;
    } else if (p == kPropertySmallestKey) {
      CopyStrided(values + value_end, smallest, smallest_size, 0, 1);
      value_end += smallest_size;
    } else if (p == kPropertyLargestKey) {
      CopyStrided(values + value_end, largest, largest_size, 0, 1);
      value_end += largest_size;
    } else {
      StoreFixed64(values + value_end, numbers[p]);
      value_end += 8;
    }
    StoreEnd(base + KeyEndsOffset(l) + uint64_t(p) * l.offset_width, l.offset_width,
             static_cast<uint32_t>(key_end));
    if (l.value_width == kVariableWidth) {
      StoreEnd(base + ValueEndsOffset(l) + uint64_t(p) * l.offset_width, l.offset_width,
               static_cast<uint32_t>(value_end));
    }
  }
  WriteBlockFooter(out, l);
}

// The footer (Footer::EncodeTo): the index, filter and properties handles,
// the format version, the magic; its CRC32C (of the 52 bytes before it) is
// WriteTableFooterCrc's.
ACCELKV_HD inline void WriteTableFooter(const EncodeTable& t, uint8_t* out) {
  uint8_t* const f = out + t.out_offset + FooterOffset(t);
  StoreFixed64(f, IndexOffset(t));
  StoreFixed64(f + 8, EncodedBlockSize(IndexLayout(t)));
  StoreFixed64(f + 16, t.filter_size > 0 ? t.data_bytes : 0);
  StoreFixed64(f + 24, t.filter_size);
  StoreFixed64(f + 32, PropertiesOffset(t));
  StoreFixed64(f + 40, EncodedBlockSize(PropertiesLayout(t)));
  StoreFixed32(f + 48, kTableFormatVersion);
  StoreFixed64(f + 56, kTableMagic);
}

// The footer's masked CRC32C of its first 52 bytes (table: the byte-wise
// CRC32C table). REQUIRES: WriteTableFooter wrote them.
ACCELKV_HD inline void WriteTableFooterCrc(const uint32_t* table, const EncodeTable& t,
                                           uint8_t* out) {
  uint8_t* const f = out + t.out_offset + FooterOffset(t);
  StoreMaskedCrc(f + 52, ~Crc32cUpdate(table, 0xffffffffu, f, 52));
}

}  // namespace gpu
}  // namespace accelkv
