// Helpers shared bit for bit by the CUDA kernels (the *_kernels.cuh files)
// and the host reference (host_key_sort_device.cc), so the reference, which
// runs and is tested everywhere, checks the exact logic the GPU runs:
// - CRC32C of a stored block (contents ++ type byte) against its masked
//   trailer (docs: table format, block trailer);
// - internal-key order over the job's key arena (every entry's internal
//   key, materialized by the CPU decoder from its block's prefix and its
//   suffix): user key ascending bytewise, then the 8-byte trailer
//   descending, then the entry index for a total order; an 8-byte
//   big-endian user-key prefix orders keys consistently with the full
//   comparison (a coarsening: prefix(a) < prefix(b) implies a < b);
// - the keep rule of ObsoleteVersionFilter (snapshot stripes; a tombstone
//   that is newest of its stripe is dropped only in the oldest stripe and
//   when its user key is absent below the output level), which needs only
//   an entry and its predecessor in sorted order, so it runs one thread per
//   entry.
//
// All functions are pure; every index they take is bounds-checked by the
// caller (the CPU decoder validates every key offset before a job starts).
#pragma once

#include <cstdint>
#include <cstring>

#include "util/fixed_load.h"

#if defined(__CUDACC__)
#define ACCELKV_HD __host__ __device__
#else
#define ACCELKV_HD
#endif

namespace accelkv {
namespace gpu {

// A block whose checksum the device verifies: contents at the file arena's
// [offset, offset + size) (the input files whole), then the 5-byte trailer (type byte, fixed32
// masked CRC32C of contents ++ type byte).
struct BlockSpan {
  uint64_t offset;
  uint64_t size;
};

// Entry i's internal key is key_arena[key_offset[i], key_offset[i] +
// key_size[i]), key_size[i] >= 8; flags[i] & kFlagOutOfRange: its user key
// lies outside the key range of the chunk being compacted (a chunked job
// reads whole blocks, so the blocks at a chunk's edges hold keys of the
// neighbouring chunks): never kept, never counted as dropped.
inline constexpr uint8_t kFlagOutOfRange = 2;

// The entry a sort item stands for, with its 8-byte key prefix cached.
struct SortItem {
  uint64_t prefix;
  uint32_t index;
};

inline constexpr uint32_t kCrc32cPoly = 0x82f63b78u;  // reflected Castagnoli
inline constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;

// BlockLayout::kVariable (docs/FORMAT.md, "Block"): a section whose entries
// differ in width; used by the decoder and the encoder.
inline constexpr uint32_t kVariableWidth = 0xffffffffu;

// Entry i (0..255) of the byte-wise CRC32C table.
ACCELKV_HD inline uint32_t Crc32cTableEntry(uint32_t i) {
  uint32_t c = i;
  for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCrc32cPoly : c >> 1;
  return c;
}

// Extends a raw (pre-inverted) CRC register over n bytes.
ACCELKV_HD inline uint32_t Crc32cUpdate(const uint32_t* table, uint32_t reg, const uint8_t* p,
                                        uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) reg = table[(reg ^ p[i]) & 0xffu] ^ (reg >> 8);
  return reg;
}

ACCELKV_HD inline void StoreFixed32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

ACCELKV_HD inline uint64_t LoadFixed64(const uint8_t* p) {
  return uint64_t{LoadFixed32(p)} | (uint64_t{LoadFixed32(p + 4)} << 32);
}

// The last of items [0, n) whose key(i) is at most x, the keys ascending
// in i; 0 when none is or n <= 1. The search of the decode's blocks by
// first entry (BlockOfEntry), the staged pieces by arena offset (PieceOf)
// and the plan's ranges by first kept position (LastStartAtOrBefore).
template <typename Key>
ACCELKV_HD inline uint64_t LastAtOrBefore(uint64_t n, uint64_t x, Key key) {
  uint64_t lo = 0;
  uint64_t hi = n;  // the answer in [lo, hi)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (key(mid) <= x) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The bytes of the little-endian word pair hi:lo from byte `shift` (0..3)
// on: the 4 bytes at lo's address + shift.
ACCELKV_HD inline uint32_t FunnelBytes(uint32_t lo, uint32_t hi, uint32_t shift) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, 8 * shift);
#else
  return static_cast<uint32_t>((uint64_t{hi} << 32 | lo) >> (8 * shift));
#endif
}

// A 4-byte aligned little-endian word (the device is little-endian).
ACCELKV_HD inline uint32_t LoadWord(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const uint32_t*>(p);
#else
  return LoadFixed32(p);
#endif
}

// Copies size bytes from src to dst (disjoint buffers), lane `lane` of
// `lanes` taking its share (a warp's or a thread block's threads on the
// device; 0 of 1 on the host). Copies of kCopyUnitsMin bytes or more go in
// 16-byte units aligned at dst, each made of the five aligned source words
// around it (four where src is 4-byte aligned too) by funnel shifts, two
// units in flight per lane: a byte per lane per step took a warp 5 ms per
// 1 MiB value on the H100 (bench/results/2026-11-26-h100-encode-large-blocks.md).
// Reads stay within [src rounded down to 4 bytes, src + size): inside any
// allocation that starts 4-byte aligned. Shorter copies, and the bytes
// before and after the units, go a byte at a time.
inline constexpr uint64_t kCopyUnitsMin = 64;

ACCELKV_HD inline void CopyStrided(uint8_t* dst, const uint8_t* src, uint64_t size, uint32_t lane,
                                   uint32_t lanes) {
#if !defined(__CUDA_ARCH__)
  // One host thread copies it all: the C library's copy (keys-only mode's
  // host encode moves every value through here; the units' byte stores ran
  // at a fraction of its rate). copy_strided_test checks the units with
  // several lanes.
  if (lanes == 1) {
    if (size > 0) std::memcpy(dst, src, size);
    return;
  }
#endif
  if (size < kCopyUnitsMin) {
    for (uint64_t k = lane; k < size; k += lanes) dst[k] = src[k];
    return;
  }
  const uint64_t head = (16u - (reinterpret_cast<uintptr_t>(dst) & 15u)) & 15u;  // < size
  const uint32_t shift = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(src + head) & 3u);
  // A shifted last unit's fifth word ends up to 4 bytes past the unit: the
  // units stop 4 bytes short of the end then, so no read passes src + size.
  const uint64_t units = (size - head - (shift != 0 ? 4 : 0)) / 16;
  const uint64_t tail = head + 16 * units;
  for (uint64_t k = lane; k < head; k += lanes) dst[k] = src[k];
  for (uint64_t k = tail + lane; k < size; k += lanes) dst[k] = src[k];
  const uint8_t* const words = src + head - shift;  // 4-byte aligned
  uint8_t* const out = dst + head;                  // 16-byte aligned
  const auto unit = [&](uint64_t u, uint32_t* v) {
    const uint8_t* w = words + 16 * u;
    const uint32_t w0 = LoadWord(w);
    const uint32_t w1 = LoadWord(w + 4);
    const uint32_t w2 = LoadWord(w + 8);
    const uint32_t w3 = LoadWord(w + 12);
    // The fifth word holds the unit's last `shift` bytes (none when 0).
    const uint32_t w4 = shift != 0 ? LoadWord(w + 16) : 0;
    v[0] = FunnelBytes(w0, w1, shift);
    v[1] = FunnelBytes(w1, w2, shift);
    v[2] = FunnelBytes(w2, w3, shift);
    v[3] = FunnelBytes(w3, w4, shift);
  };
  const auto store = [&](uint64_t u, const uint32_t* v) {
#if defined(__CUDA_ARCH__)
    *reinterpret_cast<uint4*>(out + 16 * u) = make_uint4(v[0], v[1], v[2], v[3]);
#else
    for (int k = 0; k < 4; ++k) {
      for (int b = 0; b < 4; ++b) out[16 * u + 4 * k + b] = static_cast<uint8_t>(v[k] >> (8 * b));
    }
#endif
  };
  // Both units' loads before either store: the stores may alias the loads
  // as far as the compiler knows, so they would otherwise wait in turn.
  uint64_t u = lane;
  for (; u + lanes < units; u += 2 * uint64_t{lanes}) {
    uint32_t a[4];
    uint32_t b[4];
    unit(u, a);
    unit(u + lanes, b);
    store(u, a);
    store(u + lanes, b);
  }
  if (u < units) {
    uint32_t a[4];
    unit(u, a);
    store(u, a);
  }
}

// A block trailer's masked CRC32C and back (util/crc32c.h's Mask and
// Unmask, for the device too).
ACCELKV_HD inline uint32_t MaskCrc(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta;
}
ACCELKV_HD inline uint32_t UnmaskCrc(uint32_t masked) {
  const uint32_t rot = masked - kCrcMaskDelta;
  return (rot >> 17) | (rot << 15);
}

// Whether crc, the CRC32C of a block's contents and type byte p[0, size],
// equals the masked CRC stored after them.
ACCELKV_HD inline bool StoredCrcMatches(const uint8_t* p, uint64_t size, uint32_t crc) {
  return crc == UnmaskCrc(LoadFixed32(p + size + 1));
}

// Stores a block trailer's masked form of crc at dst (fixed32).
ACCELKV_HD inline void StoreMaskedCrc(uint8_t* dst, uint32_t crc) {
  StoreFixed32(dst, MaskCrc(crc));
}

// True when the stored masked CRC32C of the block matches its bytes.
// REQUIRES: arena holds span.offset + span.size + 5 bytes.
ACCELKV_HD inline bool BlockChecksumOk(const uint32_t* table, const uint8_t* arena,
                                       const BlockSpan& span) {
  const uint8_t* p = arena + span.offset;
  return StoredCrcMatches(p, span.size, ~Crc32cUpdate(table, 0xffffffffu, p, span.size + 1));
}

// The first 8 bytes of the user key, big-endian, zero-padded.
ACCELKV_HD inline uint64_t UserKeyPrefix(const uint8_t* key, uint32_t user_size) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < 8; ++i) v = (v << 8) | (i < user_size ? uint64_t{key[i]} : 0);
  return v;
}

// An ascending list of keys in one byte array: key i is
// bytes[offsets[i], offsets[i + 1]).
struct KeyListView {
  const uint8_t* bytes;
  const uint64_t* offsets;  // n + 1 entries
  uint32_t n;
};

// memcmp-then-length order of two byte strings.
ACCELKV_HD inline int CompareBytes(const uint8_t* a, uint64_t na, const uint8_t* b, uint64_t nb) {
  const uint64_t n = na < nb ? na : nb;
  for (uint64_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return na == nb ? 0 : (na < nb ? -1 : 1);
}

// The user-key ranges of the files in the levels below a compaction's
// output (Compaction::Params::deeper_levels), level after level: level l's
// files are [l == 0 ? 0 : level_end[l - 1], level_end[l]) of both lists,
// ascending and disjoint within a level.
struct DeeperLevelsView {
  KeyListView smallest;  // each file's smallest user key
  KeyListView largest;   // each file's largest user key
  const uint32_t* level_end;
  uint32_t levels;
};

// Compaction::IsBaseLevelForKey: no deeper file's range holds user_key. Per
// level as AnyOverlap (compaction.cc) with lo = hi = the key: the first file
// whose largest user key >= it, and whether its smallest is <= it.
ACCELKV_HD inline bool IsBaseLevelKey(const DeeperLevelsView& deeper, const uint8_t* user_key,
                                      uint64_t size) {
  uint32_t begin = 0;
  for (uint32_t l = 0; l < deeper.levels; ++l) {
    const uint32_t end = deeper.level_end[l];
    uint32_t lo = begin;
    uint32_t hi = end;
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      const uint64_t b = deeper.largest.offsets[mid];
      if (CompareBytes(deeper.largest.bytes + b, deeper.largest.offsets[mid + 1] - b, user_key,
                       size) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo < end) {
      const uint64_t b = deeper.smallest.offsets[lo];
      if (CompareBytes(deeper.smallest.bytes + b, deeper.smallest.offsets[lo + 1] - b, user_key,
                       size) <= 0) {
        return false;
      }
    }
    begin = end;
  }
  return true;
}

// The key arrays of one job, as the device (or the host reference) sees them.
struct KeyArrays {
  const uint8_t* key_arena;
  const uint64_t* key_offset;
  const uint32_t* key_size;

  ACCELKV_HD const uint8_t* key(uint32_t i) const { return key_arena + key_offset[i]; }
  ACCELKV_HD uint32_t user_size(uint32_t i) const { return key_size[i] - 8; }
  ACCELKV_HD uint64_t trailer(uint32_t i) const { return LoadFixed64(key(i) + user_size(i)); }

  // <0, 0, >0: bytewise comparison of the user keys of entries a and b.
  ACCELKV_HD int CompareUserKeys(uint32_t a, uint32_t b) const {
    const uint8_t* ka = key(a);
    const uint8_t* kb = key(b);
    const uint32_t na = user_size(a);
    const uint32_t nb = user_size(b);
    const uint32_t n = na < nb ? na : nb;
    for (uint32_t i = 0; i < n; ++i) {
      if (ka[i] != kb[i]) return ka[i] < kb[i] ? -1 : 1;
    }
    return na == nb ? 0 : (na < nb ? -1 : 1);
  }

  ACCELKV_HD SortItem MakeItem(uint32_t i) const {
    return SortItem{UserKeyPrefix(key(i), user_size(i)), i};
  }

  // Internal-key order, ties broken by entry index (a strict weak order).
  ACCELKV_HD bool Less(const SortItem& a, const SortItem& b) const {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int r = CompareUserKeys(a.index, b.index);
    if (r != 0) return r < 0;
    const uint64_t ta = trailer(a.index);
    const uint64_t tb = trailer(b.index);
    if (ta != tb) return ta > tb;
    return a.index < b.index;
  }
};

// The stripe of seq: the smallest snapshot >= seq, or ~0 when none.
// snapshots: ascending, distinct.
ACCELKV_HD inline uint64_t StripeOf(const uint64_t* snapshots, uint32_t num_snapshots,
                                    uint64_t seq) {
  uint32_t lo = 0;
  uint32_t hi = num_snapshots;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (snapshots[mid] < seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < num_snapshots ? snapshots[lo] : ~uint64_t{0};
}

// Whether the entry at sorted position pos survives (ObsoleteVersionFilter's
// rule). sorted[pos] is the entry, sorted[pos - 1] its predecessor.
// A tombstone that is the newest of the oldest stripe is dropped where no
// deeper file can hold its user key (IsBaseLevelKey over deeper, asked only
// then). flags may be nullptr: no entry flagged.
ACCELKV_HD inline bool KeepSortedEntry(const KeyArrays& keys, const uint8_t* flags,
                                       const SortItem* sorted, uint64_t pos,
                                       const uint64_t* snapshots, uint32_t num_snapshots,
                                       const DeeperLevelsView& deeper) {
  const uint32_t i = sorted[pos].index;
  // Out-of-range entries sort before or after the chunk's (ranges are cut
  // on user keys), so an in-range entry's predecessor out of range has
  // another user key, as if the entry came first.
  if (flags != nullptr && (flags[i] & kFlagOutOfRange) != 0) return false;
  const uint64_t t = keys.trailer(i);
  const uint64_t seq = t >> 8;
  const uint64_t stripe = StripeOf(snapshots, num_snapshots, seq);
  if (pos > 0) {
    const SortItem& prev = sorted[pos - 1];
    if (prev.prefix == sorted[pos].prefix && keys.CompareUserKeys(prev.index, i) == 0 &&
        StripeOf(snapshots, num_snapshots, keys.trailer(prev.index) >> 8) == stripe) {
      return false;  // an older version in the same stripe: never visible
    }
  }
  const bool tombstone = (t & 0xffu) == 0;
  const bool oldest_stripe = num_snapshots == 0 || seq <= snapshots[0];
  if (tombstone && oldest_stripe && IsBaseLevelKey(deeper, keys.key(i), keys.user_size(i))) {
    return false;
  }
  return true;
}

}  // namespace gpu
}  // namespace accelkv
