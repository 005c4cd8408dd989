// The input side's kernels (docs/GPU.md, "Pipeline as built"): the data
// blocks' layout check (a thread per block), the blocks' CRC32C verify, a
// warp per block or a thread block per large one, and the entries' decode
// into the key arena. Included by cuda_key_sort_device.cu
// alone (see kernel_common.cuh).
#pragma once

#include <cstdint>

#include "gpu/crc32c_device.h"
#include "gpu/decode_common.h"
#include "gpu/kernel_common.cuh"
#include "gpu/key_sort_common.h"

namespace accelkv {
namespace gpu {
namespace {

// A warp per block under kLargeBlockBytes: the block's checksum; the lowest
// bad block index via atomicMin. Larger blocks are left to
// VerifyLargeBlocksKernel.
__global__ void VerifyKernel(const Crc32cTables* g_tables, const uint8_t* arena,
                             const BlockSpan* blocks, uint64_t n, Counters* counters) {
  __shared__ Crc32cTables tables;
  ForEachItemPerWarp(g_tables, &tables, n, [&](uint64_t b, uint32_t lane) {
    if (blocks[b].size >= kLargeBlockBytes) return;  // the same for the whole warp
    if (!WarpBlockChecksumOk(tables, arena, blocks[b], lane) && lane == 0) {
      atomicMin(&counters->bad_block, static_cast<unsigned long long>(b));
    }
  });
}

// A thread block per block of kLargeBlockBytes or more (large: their
// indices, listed by the host: a grid-stride pass over every block cost the
// few thread blocks of a job of small values, whose large blocks are the
// filters, 0.8 ms): the same check, the CRC32C by ThreadBlockCrc32c, as
// EncodeLargeBlocksKernel computes it. A warp per block took 15.4 ms for a
// job of 16 MiB values, now 2.0 ms, and 4.1 ms at 4 MiB, now 0.57
// (bench/results/2026-11-26-h100-verify-large-blocks.md).
__global__ void VerifyLargeBlocksKernel(const Crc32cTables* g_tables, const uint8_t* arena,
                                        const BlockSpan* blocks, const uint32_t* large,
                                        uint64_t n_large, Counters* counters) {
  __shared__ Crc32cTables tables;
  __shared__ uint32_t warp_crc[kThreads / 32];
  LoadCrc32cTables(&tables, g_tables, threadIdx.x, blockDim.x);
  __syncthreads();
  for (uint64_t k = blockIdx.x; k < n_large; k += gridDim.x) {
    const uint32_t b = large[k];
    const BlockSpan span = blocks[b];
    const uint8_t* p = arena + span.offset;
    const uint32_t crc = ThreadBlockCrc32c(tables, p, span.size + 1, warp_crc);
    if (threadIdx.x == 0 && !StoredCrcMatches(p, span.size, crc)) {
      atomicMin(&counters->bad_block, static_cast<unsigned long long>(b));
    }
  }
}

// A group of 2^lane_shift lanes per input entry (decode_common.h,
// DecodeLanesPerEntry: about 8 key bytes per lane, so a warp decodes
// several short keys at once): every lane finds the entry's block (a
// binary search over the blocks' first entries; the lanes read the same
// addresses) and its bounds, the lanes copy the block prefix and the key
// suffix into the key arena, lane 0 writes the entry's arrays and reports
// a malformed key through atomicMin.
__global__ void DecodeKeysKernel(const uint8_t* arena, uint8_t* key_arena,
                                 const DecodeBlock* blocks, uint64_t nb, uint64_t n,
                                 uint32_t lane_shift, uint64_t* key_offset, uint32_t* key_size,
                                 uint64_t* value_offset, uint32_t* value_size,
                                 unsigned long long* bad_entry) {
  const uint64_t thread = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t entry = thread >> lane_shift;
  const uint32_t lane = static_cast<uint32_t>(thread & ((1u << lane_shift) - 1));
  if (entry >= n) return;
  const DecodeBlock b = blocks[BlockOfEntry(blocks, nb, entry)];
  const DecodedEntry d = LocateEntry(arena, b, static_cast<uint32_t>(entry - b.first_entry));
  MaterializeKey(arena, key_arena, b, d, lane, 1u << lane_shift);
  if (lane == 0) {
    key_offset[entry] = d.key_offset;
    key_size[entry] = d.key_size;
    value_offset[entry] = d.value_offset;
    value_size[entry] = d.value_size;
    if (!InternalKeyOk(arena, b, d)) atomicMin(bad_entry, static_cast<unsigned long long>(entry));
  }
}

// Key-first jobs (KeySortDevice::SetKeyFirst): a staged piece of the file
// arena, arena[offset, offset + size), in page-locked host memory the
// device reads in place (zero copy) while the copy engine is still copying
// it in. The pieces are sorted by offset and cover the arena.
struct HostPiece {
  uint64_t offset;
  uint64_t size;
  const uint8_t* host;
  uint32_t group;  // its staging group (KeySortDevice::MarkStaged)
};

// The piece that holds arena byte x: the last one whose offset is at most x
// (pieces sorted by offset, np >= 1).
__device__ inline uint32_t PieceOf(const HostPiece* pieces, uint32_t np, uint64_t x) {
  return static_cast<uint32_t>(
      LastAtOrBefore(np, x, [pieces](uint64_t i) { return pieces[i].offset; }));
}

// Holds the stream it runs on for `micros` (the device's global timer): a
// test hook that holds staged copies back (ACCELKV_GPU_TEST_STAGE_DELAY_US,
// cuda_key_sort_device.cu).
__global__ void DelayKernel(uint64_t micros) {
  uint64_t start = 0;
  uint64_t now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < micros * 1000);
}

// The running maximum's operator (a CUB scan over the groups).
struct MaxGroup {
  __host__ __device__ uint8_t operator()(uint8_t a, uint8_t b) const { return a > b ? a : b; }
};

// Staging groups: group[i] = the staging group that holds the value of the
// entry at kept position i (its last byte: a value lies in one block, and
// a block in one staged piece or in consecutive pieces of its table, staged
// in ascending groups); 0 for an empty value, which reads nothing.
// Run then takes their running maximum over the kept order (a CUB scan):
// what the entries up to position i need.
__global__ void StagedGroupsKernel(const HostPiece* pieces, uint32_t np, const uint32_t* kept,
                                   uint64_t k, const uint64_t* value_offset,
                                   const uint32_t* value_size, uint8_t* group) {
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < k;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const uint32_t e = kept[i];
    const uint32_t size = value_size[e];
    const uint64_t last = value_offset[e] + size - 1;
    group[i] = size == 0 ? 0 : static_cast<uint8_t>(pieces[PieceOf(pieces, np, last)].group);
  }
}

// The warp's lanes copy arena[lo, hi) from the host pieces into view at the
// same offsets (CopyStrided, piece by piece).
__device__ void GatherArenaRange(const HostPiece* pieces, uint32_t np, uint64_t lo, uint64_t hi,
                                 uint8_t* view, uint32_t lane) {
  if (lo >= hi || np == 0) return;
  for (uint32_t k = PieceOf(pieces, np, lo); k < np && lo < hi; ++k) {
    const HostPiece p = pieces[k];
    const uint64_t end = hi < p.offset + p.size ? hi : p.offset + p.size;
    if (end <= lo) continue;
    CopyStrided(view + lo, p.host + (lo - p.offset), end - lo, lane, 32);
    lo = end;
  }
}

// A warp per data block (key-first jobs): the bytes of its span that
// CheckDataBlock and DecodeKeysKernel read, from the host pieces into view
// (a device buffer the size of the file arena) at their arena offsets:
// the trailer's type byte, the footer, the end-offset arrays the footer
// names (when they fit the block) and the prefix and key suffixes (up to
// the arrays' start); a block under 64 bytes whole. The check reads
// nothing else, so it finds in view what it would find in the arena, and
// a block that passes it has every byte the decode reads there. The values
// stay in the host's pieces until the staged copies bring them (the
// verify and the encode wait for those).
__global__ void GatherKeySectionsKernel(const HostPiece* pieces, uint32_t np,
                                        const BlockSpan* spans, uint64_t nb, uint8_t* view) {
  const uint32_t lane = threadIdx.x & 31u;
  const uint64_t warps = uint64_t{gridDim.x} * (blockDim.x / 32);
  for (uint64_t i = (blockIdx.x * uint64_t{blockDim.x} + threadIdx.x) / 32; i < nb; i += warps) {
    const uint64_t o = spans[i].offset;
    const uint64_t s = spans[i].size;
    if (s < 64) {
      GatherArenaRange(pieces, np, o, o + s + 1, view, lane);
      continue;
    }
    const uint64_t footer = s - BlockLayout::kFooterSize;
    GatherArenaRange(pieces, np, o + footer, o + s + 1, view, lane);
    __syncwarp();
    const uint8_t* f = view + o + footer;
    const uint64_t n = LoadFixed32(f);
    const uint64_t prefix = LoadFixed32(f + 4);
    const uint32_t key_width = LoadFixed32(f + 8);
    const uint32_t value_width = LoadFixed32(f + 12);
    const uint32_t w = s <= BlockLayout::kMaxNarrowSize ? 2 : 4;
    const uint64_t arrays = ((key_width == BlockLayout::kVariable ? 1u : 0u) +
                             (value_width == BlockLayout::kVariable ? 1u : 0u)) *
                            n * w;
    if (arrays > footer) continue;  // the check fails on the footer alone
    const uint64_t start = footer - arrays;
    GatherArenaRange(pieces, np, o + start, o + footer, view, lane);
    __syncwarp();
    uint64_t keys = 0;
    if (key_width != BlockLayout::kVariable) {
      keys = n * key_width;
    } else if (n > 0) {
      keys = BlockLoadEnd(view + o + start, w, n - 1);
    }
    const uint64_t end = prefix > start || keys > start - prefix ? start : prefix + keys;
    GatherArenaRange(pieces, np, o, o + end, view, lane);
  }
}

// KeySortDevice::CheckBlocks' results on the device: the sums over every
// block, the lowest failing span packed with its code (span << 8 | code,
// ~0: none; codes are under 256), the fixed key sizes' least and greatest
// over the blocks with entries, and their largest AverageKeySize (for
// DecodeLanesForKeySize).
struct CheckTotals {
  BlockSums sums;
  unsigned long long bad;        // ~0 before the check
  unsigned long long fixed_min;  // ~0 before the check
  unsigned long long fixed_max;  // 0 before the check
  unsigned long long max_key;    // 0 before the check
};

// One thread per span: its CheckDataBlock, its share of the sums (scanned
// next, into each block's key base and first entry), and the totals'
// lowest failure and fixed key sizes through atomics (the sizes one per
// warp).
__global__ void CheckBlocksKernel(const uint8_t* arena, const BlockSpan* spans, uint64_t nb,
                                  BlockSums* shares, CheckTotals* totals) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  unsigned long long fixed_min = ~0ull;  // the identities of min and max
  unsigned long long fixed_max = 0;
  if (i < nb) {
    BlockLayout l;
    const uint32_t code = CheckDataBlock(arena + spans[i].offset, spans[i].size, &l);
    shares[i] = BlockShare(code, l);
    if (code != kDataBlockOk) {
      atomicMin(&totals->bad, static_cast<unsigned long long>((i << 8) | code));
    } else if (l.n > 0) {
      fixed_min = fixed_max = static_cast<unsigned long long>(FixedKeySize(l));
    }
  }
  // Every lane of the warp reaches here (kThreads is a multiple of 32).
  fixed_min = WarpMin(fixed_min);
  fixed_max = WarpMax(fixed_max);
  if ((threadIdx.x & 31u) == 0) {
    if (fixed_min != ~0ull) atomicMin(&totals->fixed_min, fixed_min);
    if (fixed_max != 0) atomicMax(&totals->fixed_max, fixed_max);
  }
}

// One thread per span: the DecodeBlock of each block with entries at its
// place among them (before[i], the exclusive scan of the shares), its
// AverageKeySize into the totals, and the sums over every block from the
// last span. Each block's check runs again
// here (a footer and its end offsets, cheap on the device) rather than a
// 56-byte layout kept per block between the kernels.
__global__ void WriteDecodeBlocksKernel(const uint8_t* arena, const BlockSpan* spans, uint64_t nb,
                                        const BlockSums* before, DecodeBlock* blocks,
                                        CheckTotals* totals) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  unsigned long long max_key = 0;  // the identity of max
  if (i < nb) {
    BlockLayout l;
    const uint32_t code = CheckDataBlock(arena + spans[i].offset, spans[i].size, &l);
    const BlockSums b = before[i];
    if (code == kDataBlockOk && l.n > 0) {
      const DecodeBlock d = MakeDecodeBlock(spans[i].offset, l, b.key_bytes, b.entries);
      blocks[b.blocks] = d;
      max_key = AverageKeySize(d);
    }
    if (i + 1 == nb) totals->sums = AddBlockSums()(b, BlockShare(code, l));
  }
  max_key = WarpMax(max_key);  // every lane of the warp reaches here
  if ((threadIdx.x & 31u) == 0 && max_key != 0) atomicMax(&totals->max_key, max_key);
}

}  // namespace
}  // namespace gpu
}  // namespace accelkv
