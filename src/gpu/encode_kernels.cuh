// The output side's kernels (docs/GPU.md, "Pipeline as built"): the plan inputs and
// the subcompaction ranges' starts, the data blocks' encode (a warp per
// block, a thread block per large one, several per huge one) with their
// CRC32C, the bloom filters and the table tails. Included by
// cuda_key_sort_device.cu alone (see kernel_common.cuh).
#pragma once

#include <cstdint>

#include "gpu/crc32c_device.h"
#include "gpu/encode_common.h"
#include "gpu/kernel_common.cuh"
#include "gpu/plan_common.h"
#include "gpu/split_common.h"
#include "gpu/tail_common.h"

namespace accelkv {
namespace gpu {
namespace {

// One thread per kept entry: its plan inputs (plan_common.h).
__global__ void PlanKernel(KeyArrays keys, const uint32_t* value_size, const uint32_t* kept,
                           uint64_t n, KeyListView grandparents, KeyListView boundaries,
                           PlanEntry* plan) {
  const uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (k < n) plan[k] = MakePlanEntry(keys, value_size, kept, k, grandparents, boundaries);
}

// One thread per subcompaction boundary b = i + 1: the first output
// position of its range (BoundaryStart).
__global__ void BoundaryStartsKernel(const PlanEntry* plan, uint64_t n, uint32_t nb,
                                     uint64_t* starts) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < nb) starts[i] = BoundaryStart(plan, n, static_cast<uint32_t>(i + 1));
}

// The last of n ascending starts (starts[i * stride]) at or before k: 0
// when none (BlockStartsKernel's ranges, the split rounds' windows).
__device__ inline uint32_t LastStartAtOrBefore(const uint64_t* starts, uint32_t stride, uint32_t n,
                                               uint64_t k) {
  return static_cast<uint32_t>(
      LastAtOrBefore(n, k, [starts, stride](uint64_t i) { return starts[stride * i]; }));
}

// Block plan (docs/GPU.md, "Block plan"). One thread per kept entry: its
// nominal size, which an exclusive sum turns into the prefix sums.
__global__ void NominalSizesKernel(const PlanEntry* plan, uint64_t n, uint64_t* sizes) {
  const uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (k < n) sizes[k] = NominalSize(plan[k]);
}

// One thread per kept entry: 1 where it starts a data block of its range
// (range_starts: ranges + 1 ascending positions, from 0 to n), each taken
// as one table from its first entry (StartsBlock), else 0.
__global__ void BlockStartsKernel(const uint64_t* prefix, uint64_t n, const uint64_t* range_starts,
                                  uint32_t ranges, uint64_t block_size, uint32_t* flags) {
  const uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (k >= n) return;
  const uint32_t r = LastStartAtOrBefore(range_starts, 1, ranges, k);
  flags[k] = StartsBlock(prefix, k, range_starts[r], block_size) ? 1 : 0;
}

// One thread per kept entry that starts a block (flags; ids: their
// exclusive sum, the block's index): its record (MakeBlockRun), up to the
// next block's start; the last entry's thread also stores the count.
__global__ void BlockRunsKernel(const PlanEntry* plan, uint64_t n, const uint32_t* flags,
                                const uint32_t* ids, BlockRun* runs) {
  const uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (k >= n || flags[k] == 0) return;
  uint64_t end = k + 1;
  while (end < n && flags[end] == 0) ++end;
  runs[ids[k]] = MakeBlockRun(plan, k, end);
}

// Table splits (docs/GPU.md, "Table splits"; split_common.h). A window is
// [begin, end) of one open table of a range (begin its first entry) and
// that range's end: windows[3 * w + 0, 1, 2], ascending by begin.
__device__ inline uint32_t WindowOf(const uint64_t* windows, uint32_t nw, uint64_t k) {
  return LastStartAtOrBefore(windows, 3, nw, k);
}

// One thread per kept entry of [lo, n): 1 where it starts a data block of
// its window's table, cut from the table's first entry (StartsBlock,
// prefix: the nominal sizes' exclusive sum over the job), else 0 (outside
// every window too).
__global__ void SplitBlockStartsKernel(const uint64_t* prefix, uint64_t lo, uint64_t n,
                                       const uint64_t* windows, uint32_t nw, uint64_t block_size,
                                       uint32_t* flags) {
  const uint64_t k = lo + blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (k >= n) return;
  const uint32_t w = WindowOf(windows, nw, k);
  const uint64_t begin = windows[3 * w];
  const bool inside = k >= begin && k < windows[3 * w + 1];
  flags[k - lo] = inside && StartsBlock(prefix, k, begin, block_size) ? 1 : 0;
}

// One thread per block start (flags, ids: their exclusive sum, from lo):
// the block, up to the next start or its window's end, and what its
// table's state sums over it (MakeSplitSums), keyed by its window.
__global__ void SplitBlocksKernel(const PlanEntry* plan, const uint8_t* key_arena, uint64_t lo,
                                  uint64_t n, const uint32_t* flags, const uint32_t* ids,
                                  const uint64_t* windows, uint32_t nw, SplitBlock* blocks,
                                  SplitSums* sums, uint32_t* keys) {
  const uint64_t k = lo + blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (k >= n || flags[k - lo] == 0) return;
  const uint32_t w = WindowOf(windows, nw, k);
  const uint64_t window_end = windows[3 * w + 1];
  uint64_t end = k + 1;
  while (end < window_end && flags[end - lo] == 0) ++end;
  const uint32_t id = ids[k - lo];
  blocks[id] = SplitBlock{k, end, windows[3 * w], windows[3 * w + 2]};
  sums[id] = MakeSplitSums(plan, key_arena, k, end, windows[3 * w]);
  keys[id] = w;
}

// One thread per block record of the first split round (BlockRuns' cut of
// each range as one table, each range one window): its block, its table's
// sums over it (SplitSumsOfRun), its window.
__global__ void RunSplitSumsKernel(const PlanEntry* plan, const uint8_t* key_arena,
                                   const BlockRun* runs, uint64_t n, const uint64_t* windows,
                                   uint32_t nw, SplitBlock* blocks, SplitSums* sums,
                                   uint32_t* keys) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const BlockRun& b = runs[i];
  const uint32_t w = WindowOf(windows, nw, b.first);
  blocks[i] = SplitBlock{b.first, b.end, windows[3 * w], windows[3 * w + 2]};
  sums[i] = SplitSumsOfRun(plan, key_arena, b, windows[3 * w]);
  keys[i] = w;
}

// CombineSplitSums as a CUB scan operator.
struct CombineSplitSumsOp {
  __device__ SplitSums operator()(const SplitSums& a, const SplitSums& b) const {
    return CombineSplitSums(a, b);
  }
};

// One thread per block of the windows: the least entry before which its
// table ends (FirstSplitInBlock, closed: the scan of its table's blocks
// before it) into splits[its window] (~0 stays: none in the window).
__global__ void FirstSplitKernel(const PlanEntry* plan, const uint8_t* key_arena,
                                 const SplitBlock* blocks, const SplitSums* closed,
                                 const uint32_t* keys, uint64_t nb, TableSplitRule rule,
                                 const uint64_t* grandparent_bytes, unsigned long long* splits) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i >= nb) return;
  const uint64_t e =
      FirstSplitInBlock(plan, key_arena, blocks[i], closed[i], rule, grandparent_bytes);
  if (e != ~uint64_t{0}) atomicMin(&splits[keys[i]], static_cast<unsigned long long>(e));
}

// One warp per output block, grid-stride: the lanes copy its entries' key
// bytes and values (EncodeBlockEntries), lane 0 writes the end offsets, the
// footer and the trailer's type byte; once the warp's writes are visible
// (__syncwarp orders them) the warp computes the masked CRC32C together
// (crc32c_device.h, tables in shared memory as in VerifyKernel).
// Blocks of kLargeBlockBytes or more are left to EncodeLargeBlocksKernel.
__global__ void EncodeBlocksKernel(const Crc32cTables* g_tables, EncodeSources src,
                                   const EncodeBlock* blocks, uint64_t nb, uint8_t* out) {
  __shared__ Crc32cTables tables;
  ForEachItemPerWarp(g_tables, &tables, nb, [&](uint64_t w, uint32_t lane) {
    const EncodeBlock b = blocks[w];
    if (EncodedBlockSize(b) >= kLargeBlockBytes) return;
    EncodeBlockEntries(src, b, out, lane, 32);
    if (lane == 0) WriteBlockFooter(out, b);
    __syncwarp();
    WarpWriteBlockCrc(tables, out, b.out_offset, EncodedBlockSize(b), lane);
  });
}

// The blocks of kLargeBlockBytes or more (others are EncodeBlocksKernel's):
// a thread block per output block, grid-stride, all kThreads threads
// copying its entries (EncodeBlockEntries), thread 0 writing the ends and
// the footer, then the CRC32C by ThreadBlockCrc32c. A warp per block left
// few warps on few SMs to copy and checksum values of 64 KiB to 1 MiB.
// Each thread block passes over every block of the part, skipping the
// small and the huge ones: a list of the large ones, as verify takes, was
// no faster with mixed value sizes
// (bench/results/2026-11-26-h100-encode-large-list.md).
__global__ void EncodeLargeBlocksKernel(const Crc32cTables* g_tables, EncodeSources src,
                                        const EncodeBlock* blocks, uint64_t nb, uint8_t* out) {
  __shared__ Crc32cTables tables;
  __shared__ uint32_t warp_crc[kThreads / 32];
  LoadCrc32cTables(&tables, g_tables, threadIdx.x, blockDim.x);
  __syncthreads();
  for (uint64_t i = blockIdx.x; i < nb; i += gridDim.x) {
    const EncodeBlock b = blocks[i];
    const uint64_t size = EncodedBlockSize(b);
    if (size < kLargeBlockBytes || size >= kHugeBlockBytes) continue;  // the same for every thread
    EncodeBlockEntries(src, b, out, threadIdx.x, blockDim.x);
    if (threadIdx.x == 0) WriteBlockFooter(out, b);
    __syncthreads();  // the block's bytes visible to every thread
    const uint32_t crc = ThreadBlockCrc32c(tables, out + b.out_offset, size + 1, warp_crc);
    if (threadIdx.x == 0) StoreMaskedCrc(out + b.out_offset + size + 1, crc);
  }
}

// A block of kHugeBlockBytes or more and the thread blocks that encode it:
// [first_tb, first_tb + tbs) of the kernel's grid.
struct HugeBlock {
  uint32_t block;  // its index in the kernel's block array
  uint32_t first_tb;
  uint32_t tbs;
};

// The calling thread as a lane of its huge block's group: thread block
// blockIdx.x works on the last entry of the list (ascending by first_tb,
// covering the grid) whose first_tb is at most blockIdx.x.
struct HugeLane {
  uint32_t k;  // the block's index in the list
  EncodeBlock block;
  uint32_t lane;
  uint32_t lanes;  // tbs x blockDim.x
};

__device__ HugeLane HugeLaneOf(const EncodeBlock* blocks, const HugeBlock* huge, uint32_t n) {
  uint32_t lo = 0;
  uint32_t hi = n - 1;
  while (lo < hi) {
    const uint32_t mid = (lo + hi + 1) / 2;
    if (huge[mid].first_tb <= blockIdx.x) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const HugeBlock h = huge[lo];
  return HugeLane{lo, blocks[h.block], (blockIdx.x - h.first_tb) * blockDim.x + threadIdx.x,
                  h.tbs * blockDim.x};
}

// The blocks of kHugeBlockBytes or more, each by its tbs thread blocks as
// one group of lanes (EncodeBlockEntries over the group's lanes), lane 0
// writing the ends and the footer. The checksum needs every byte written,
// so it is the next kernel's.
__global__ void EncodeHugeBlocksKernel(EncodeSources src, const EncodeBlock* blocks,
                                       const HugeBlock* huge, uint32_t n_huge, uint8_t* out) {
  const HugeLane h = HugeLaneOf(blocks, huge, n_huge);
  EncodeBlockEntries(src, h.block, out, h.lane, h.lanes);
  if (h.lane == 0) WriteBlockFooter(out, h.block);
}

// The huge blocks' CRC32C, each over the lanes of its tbs thread blocks:
// every warp's XOR of its lanes' shifted parts (CrcPartShifted) goes into
// the block's word of acc by atomicXor (zeroed before; XOR is order-free).
__global__ void HugeBlocksCrcKernel(const Crc32cTables* g_tables, const EncodeBlock* blocks,
                                    const HugeBlock* huge, uint32_t n_huge, const uint8_t* out,
                                    uint32_t* acc) {
  __shared__ Crc32cTables tables;
  LoadCrc32cTables(&tables, g_tables, threadIdx.x, blockDim.x);
  __syncthreads();
  const HugeLane h = HugeLaneOf(blocks, huge, n_huge);
  const uint32_t reg = WarpXor(CrcPartShifted(tables, out + h.block.out_offset,
                                              EncodedBlockSize(h.block) + 1, h.lane, h.lanes));
  if ((threadIdx.x & 31u) == 0) atomicXor(&acc[h.k], reg);
}

// Each huge block's masked CRC32C after its trailer's type byte.
__global__ void StoreHugeBlocksCrcKernel(const EncodeBlock* blocks, const HugeBlock* huge,
                                         uint32_t n_huge, const uint32_t* acc, uint8_t* out) {
  const uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (k >= n_huge) return;
  const EncodeBlock b = blocks[huge[k].block];
  StoreMaskedCrc(out + b.out_offset + EncodedBlockSize(b) + 1, ~acc[k]);
}

// The filters' lines zeroed and their footers: a thread block per filter.
__global__ void FilterInitKernel(const EncodeFilter* filters, uint8_t* out) {
  const EncodeFilter f = filters[blockIdx.x];
  uint8_t* bits = out + f.out_offset;
  const uint64_t size = uint64_t{f.num_lines} * kBloomLineBytes;
  for (uint64_t i = threadIdx.x; i < size; i += blockDim.x) bits[i] = 0;
  if (threadIdx.x == 0) WriteFilterFooter(out, f);
}

// One thread per kept position of the chunk: the probe bits of its user
// key, if it adds one, set with atomicOr on the aligned 32-bit word that
// holds each bit's byte (OR commutes, so the bits are FilterBuilder's in
// any order; neighbouring bytes are ORed with 0).
__global__ void FilterBitsKernel(EncodeSources src, const EncodeFilter* filters, uint64_t nf,
                                 uint64_t first, uint64_t n, uint8_t* out) {
  const uint64_t k = first + blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (k >= first + n) return;
  const uint64_t fi = FilterOfKept(filters, nf, k);
  if (fi == nf) return;
  const EncodeFilter& f = filters[fi];
  uint64_t h = 0;
  if (!FilterKeyHash(src, f, k, &h)) return;
  uint8_t* const bits = out + f.out_offset;
  BloomProbes(h, f.num_lines, static_cast<int>(f.num_probes), [bits](uint64_t byte, uint8_t mask) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(bits + byte);
    atomicOr(reinterpret_cast<unsigned int*>(a & ~uintptr_t{3}), static_cast<unsigned int>(mask)
                                                                     << (8 * (a & 3)));
    return true;
  });
}

// A warp per filter: the masked CRC32C of its contents ++ type byte.
__global__ void FilterCrcKernel(const Crc32cTables* g_tables, const EncodeFilter* filters,
                                uint64_t nf, uint8_t* out) {
  __shared__ Crc32cTables tables;
  ForEachItemPerWarp(g_tables, &tables, nf, [&](uint64_t w, uint32_t lane) {
    WarpWriteBlockCrc(tables, out, filters[w].out_offset, EncodedFilterSize(filters[w]), lane);
  });
}

// A thread block per table (tail_common.h): its threads write the index
// entries (grid-stride over its data blocks; blocks: the call's first
// block, block_base its index in the job), thread 0 the index block's
// footer, the properties block and the table's footer; then the two
// blocks' masked CRC32C by the whole thread block (ThreadBlockCrc32c).
__global__ void TableTailsKernel(const Crc32cTables* g_tables, EncodeSources src,
                                 const EncodeBlock* blocks, uint64_t block_base,
                                 const EncodeTable* tails, const uint8_t* comparator,
                                 uint8_t* out) {
  __shared__ Crc32cTables tables;
  __shared__ uint32_t warp_crc[kThreads / 32];
  LoadCrc32cTables(&tables, g_tables, threadIdx.x, blockDim.x);
  const EncodeTable t = tails[blockIdx.x];
  const EncodeBlock* table_blocks = blocks + (t.first_block - block_base);
  const EncodeBlock index = IndexLayout(t);
  for (uint64_t e = threadIdx.x; e < index.n; e += blockDim.x) {
    WriteIndexEntry(src, table_blocks, t, e, out);
  }
  if (threadIdx.x == 0) {
    WriteBlockFooter(out, index);
    WritePropertiesBlock(src, table_blocks, t, comparator, out);
  }
  __syncthreads();  // the tables and both blocks' bytes visible to every thread
  if (threadIdx.x == 0) {
    WriteTableFooter(t, out);
    WriteTableFooterCrc(tables.slice[0], t, out);
  }
  const uint64_t index_size = EncodedBlockSize(index);
  uint32_t crc = ThreadBlockCrc32c(tables, out + index.out_offset, index_size + 1, warp_crc);
  if (threadIdx.x == 0) StoreMaskedCrc(out + index.out_offset + index_size + 1, crc);
  const uint64_t props = t.out_offset + PropertiesOffset(t);
  const uint64_t props_size = EncodedBlockSize(PropertiesLayout(t));
  crc = ThreadBlockCrc32c(tables, out + props, props_size + 1, warp_crc);
  if (threadIdx.x == 0) StoreMaskedCrc(out + props + props_size + 1, crc);
}

}  // namespace
}  // namespace gpu
}  // namespace accelkv
