// CudaKeySortDevice: the CUDA KeySortDevice (see key_sort_device.h).
//
// One job, all on one stream:
//   stage    (BeginStaging, StageRange) the device file arena allocated
//            before the reads, each input file's range copied in as soon as
//            it is read (cudaMemcpyAsync from the pinned arena, between a
//            pair of events), while the other files are still being read
//   decode   (DecodeKeys) the file arena (unless staged whole) and the
//            blocks' layouts in,
//            DecodeKeysKernel (a group of lanes per entry, about 8 key
//            bytes each, materializes its key into the device key arena), then the key arena and
//            the entry arrays out on a second stream into pinned memory, overlapping what follows
//            (the CPU reads them after WaitDecodedKeys); both arenas and the entry arrays stay
//   copy_in  block spans + per-entry flags + snapshots (and both arenas
//            and the entry arrays when DecodeKeys did not leave them)
//   verify   VerifyKernel: a warp per block, the lanes CRC32C contiguous
//            chunks slicing-by-8 and combine them (crc32c_device.h, tables
//            in shared memory); the lowest bad block index via atomicMin
//   sort     MakeItemsKernel (8-byte big-endian key prefix + entry index),
//            then cub::DeviceMergeSort::SortKeys with the full internal-key
//            comparison on prefix ties (inputs are sorted runs; merge sort
//            handles keys of any length without padding)
//   dedup    DedupKernel: ObsoleteVersionFilter's rule per entry and its
//            predecessor (+ duplicate internal-key detection), then
//            cub::DeviceSelect::Flagged to compact the kept entry indices
//   copy_out the counters, then the kept indices
//   plan     (keep_for_encode) PlanKernel: a thread per kept entry writes
//            its PlanEntry (plan_common.h), copied to a pinned buffer
// and, in device-encode mode (EncodeBlocks, after the CPU planned the
// output; called once per chunk of output tables): the chunk's planned
// blocks in, EncodeBlocksKernel (a warp per output
// block copies its entries' key bytes and values from the arenas, entry
// arrays and kept order Run left on the device, lane 0 writes the end
// offsets, the footer and the trailer CRC32C) over parts of about 4 MiB,
// each part's bytes copied out on a second stream while the next part's
// kernel runs, then the chunk's tables' bloom filters (FilterInitKernel
// zeroes, FilterBitsKernel sets each key's probe bits with atomicOr,
// FilterCrcKernel) and their bytes out; the inputs stay until
// ReleaseEncodeInput. Device
// memory comes from the stream-ordered default pool with its release
// threshold raised, so it is reused across jobs; the pinned host buffers
// grow and are reused. Every CUDA error becomes Aborted("gpu: <stage>: ...").
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/tuple>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "accelkv/env.h"
#include "gpu/crc32c_device.h"
#include "gpu/gpu_util.h"
#include "gpu/key_sort_device.h"
#include "util/align.h"
#include "util/huge_pages.h"

namespace accelkv {
namespace gpu {

namespace {

constexpr int kThreads = 256;
// EncodeBlocks splits a chunk into parts of about kEncodePartBytes of
// output (at most kEncodeParts), each copied back while the next one's
// kernel runs.
constexpr uint64_t kEncodePartBytes = 4ull << 20;
constexpr uint64_t kEncodeParts = 8;
// ...and of at least kMinPartBlocks blocks, where the chunk has them. A
// block of kLargeBlockBytes or more gets one thread block, so parts of one
// or two blocks kept all but one or two SMs idle: at 4 MiB values a 32 MiB
// chunk of about 8 blocks made 8 parts of one block, and gpu_encode took
// 23-25 ms for 230 MB, 7.6 ms since
// (bench/results/2026-11-26-h100-encode-part-blocks.md). Chunks of small
// blocks hold thousands and keep their 8 parts.
constexpr uint64_t kMinPartBlocks = 8;
// Output data blocks of at least this many bytes (contents) are encoded by
// a thread block each (EncodeLargeBlocksKernel), smaller ones by a warp.
constexpr uint64_t kLargeBlockBytes = 16 << 10;
// ...and from kHugeBlockBytes up by a thread block per kHugeSliceBytes
// (EncodeHugeBlocksKernel, HugeBlocksCrcKernel): a 32 MiB encode chunk of
// 16 MiB values holds two blocks, which two thread blocks encoded in 11 ms
// per job, 3.4 ms since (bench/results/2026-11-26-h100-encode-huge-blocks.md).
constexpr uint64_t kHugeBlockBytes = 1 << 20;
constexpr uint64_t kHugeSliceBytes = 128 << 10;
// PlanStage copies the plan entries back in parts (QueuePlanCopies): up to
// kPlanSlices per subcompaction range, none under kPlanPartBytes unless its
// range is, at most kPlanParts in all.
constexpr uint64_t kPlanSlices = 4;
constexpr uint64_t kPlanParts = 64;
constexpr uint64_t kPlanPartBytes = 256 << 10;

struct Counters {
  unsigned long long bad_block;  // ~0: none
  unsigned long long num_kept;
  unsigned int duplicate;
};

// The small results the host waits for mid-job, in pinned host memory the
// device maps (zero copy). PublishKernel writes them there from device
// memory: a cudaMemcpyAsync back would be served by the copy engine after
// the large copies back already queued (the decoded keys, 50-120 MB at
// 32-128 B values), and waited 1-2 ms behind them.
struct Mailbox {
  unsigned long long bad_entry;      // DecodeKeysKernel's lowest malformed key, ~0: none
  unsigned long long radix_mask[3];  // RadixDiffKernel's differing bits
  unsigned long long counters[3];    // Counters, as 8-byte words
};
static_assert(sizeof(Counters) == 3 * sizeof(unsigned long long));

__global__ void PublishKernel(const unsigned long long* src, unsigned long long* dst,
                              uint32_t words) {
  if (threadIdx.x < words) dst[threadIdx.x] = src[threadIdx.x];
}

// The warp-per-item kernels' loop (verify, encode, filter CRCs): calls
// fn(item, lane) for items [0, n), one warp per item, grid-stride, after
// each thread block loaded the CRC32C slicing and shift tables into shared
// memory (crc32c_device.h), which fn reads as `tables`.
template <typename Fn>
__device__ void ForEachItemPerWarp(const Crc32cTables* g_tables, Crc32cTables* tables, uint64_t n,
                                   Fn&& fn) {
  LoadCrc32cTables(tables, g_tables, threadIdx.x, blockDim.x);
  __syncthreads();
  const uint32_t lane = threadIdx.x & 31u;
  const uint64_t warps = uint64_t{gridDim.x} * (blockDim.x / 32);
  for (uint64_t i = (blockIdx.x * uint64_t{blockDim.x} + threadIdx.x) / 32; i < n; i += warps) {
    fn(i, lane);
  }
}

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

// CRC32C of p[0, n) by the whole thread block: each thread checksums a
// chunk (CrcPartShifted), the parts XOR-reduced per warp and then across
// the warps. Every thread of the block calls it; the result is thread 0's.
// scratch: kThreads / 32 words of shared memory, free again on return.
__device__ uint32_t ThreadBlockCrc32c(const Crc32cTables& tables, const uint8_t* p, uint64_t n,
                                      uint32_t* scratch) {
  const uint32_t reg = WarpXor(CrcPartShifted(tables, p, n, threadIdx.x, blockDim.x));
  if ((threadIdx.x & 31u) == 0) scratch[threadIdx.x / 32] = reg;
  __syncthreads();
  uint32_t all = 0;
  if (threadIdx.x == 0) {
    for (uint32_t k = 0; k < blockDim.x / 32; ++k) all ^= scratch[k];
  }
  __syncthreads();  // scratch is reused
  return ~all;
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

__global__ void MakeItemsKernel(KeyArrays keys, uint64_t n, SortItem* items) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < n) items[i] = keys.MakeItem(static_cast<uint32_t>(i));
}

__global__ void DedupKernel(KeyArrays keys, const uint8_t* flags, const SortItem* sorted,
                            uint64_t n, const uint64_t* snapshots, uint32_t num_snapshots,
                            DeeperLevelsView deeper, uint8_t* keep, uint32_t* index,
                            Counters* counters) {
  const uint64_t pos = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (pos >= n) return;
  index[pos] = sorted[pos].index;
  keep[pos] = KeepSortedEntry(keys, flags, sorted, pos, snapshots, num_snapshots, deeper) ? 1 : 0;
  if (pos > 0) {
    const uint32_t a = sorted[pos - 1].index;
    const uint32_t b = sorted[pos].index;
    if (keys.CompareUserKeys(a, b) == 0 && keys.trailer(a) == keys.trailer(b)) {
      atomicExch(&counters->duplicate, 1u);
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

struct LessOp {
  KeyArrays keys;
  __host__ __device__ bool operator()(const SortItem& a, const SortItem& b) const {
    return keys.Less(a, b);
  }
};

// The radix path (jobs whose user keys all have one length of at most 16
// bytes, KeySortInput::fixed_key_size): an entry's key as three 64-bit
// digits, most significant first: the user key big-endian (zero-padded past
// its end, the same for every key of the job, so the padding never ties a
// key with a longer one), then ~trailer (the trailer descending). Radix sort
// is stable and the values start as 0..n-1, so ties keep the entry index
// order: the order is KeyArrays::Less's exactly.
struct RadixKey {
  uint64_t hi;
  uint64_t mid;
  uint64_t lo;
};

struct RadixKeyDigits {
  __host__ __device__ ::cuda::std::tuple<uint64_t&, uint64_t&, uint64_t&> operator()(
      RadixKey& k) const {
    return {k.hi, k.mid, k.lo};
  }
};

// Entry e's radix key: its user key's two big-endian 8-byte words, then its
// inverted trailer (sequence descending), compared as one 192-bit number.
__device__ RadixKey MakeRadixKey(const KeyArrays& keys, uint32_t e) {
  const uint8_t* k = keys.key(e);
  const uint32_t us = keys.user_size(e);
  return RadixKey{UserKeyPrefix(k, us), us > 8 ? UserKeyPrefix(k + 8, us - 8) : 0,
                  ~keys.trailer(e)};
}

__global__ void MakeRadixKeysKernel(KeyArrays keys, uint64_t n, RadixKey* out, uint32_t* index) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const uint32_t e = static_cast<uint32_t>(i);
  out[i] = MakeRadixKey(keys, e);
  index[i] = e;
}

// The radix key bits in which some entry differs from entry 0 (the OR over
// all entries of key XOR entry 0's key), per word: mask[0..2] (zeroed by the
// caller). A warp ORs its lanes' bits first; every thread of a block takes
// part (n past the end adds nothing), as the shuffles need.
__global__ void RadixDiffKernel(KeyArrays keys, uint64_t n, unsigned long long* mask) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  unsigned long long d[3] = {0, 0, 0};
  if (i < n) {
    const RadixKey k = MakeRadixKey(keys, static_cast<uint32_t>(i));
    const RadixKey k0 = MakeRadixKey(keys, 0);
    d[0] = k.hi ^ k0.hi;
    d[1] = k.mid ^ k0.mid;
    d[2] = k.lo ^ k0.lo;
  }
  for (int w = 0; w < 3; ++w) {
    for (int offset = 16; offset > 0; offset /= 2)
      d[w] |= __shfl_xor_sync(0xffffffffu, d[w], offset);
  }
  if ((threadIdx.x & 31u) == 0) {
    for (int w = 0; w < 3; ++w) {
      if (d[w] != 0) atomicOr(&mask[w], d[w]);
    }
  }
}

// Appends the bits of word at mask's set positions, most significant first,
// to acc.
__device__ uint64_t GatherBits(uint64_t word, uint64_t mask, uint64_t acc) {
  while (mask != 0) {
    const int b = 63 - __clzll(static_cast<long long>(mask));
    acc = (acc << 1) | ((word >> b) & 1u);
    mask &= ~(uint64_t{1} << b);
  }
  return acc;
}

// The radix keys with only the bits that differ between entries (mask, at
// most 64 in all): the bits left out are the same in every key, so the
// packed keys order the entries as the whole keys do, in a third of the
// passes or fewer (16-byte decimal keys: about 57 bits against 192).
__global__ void PackRadixKeysKernel(KeyArrays keys, uint64_t n, RadixKey mask, uint64_t* out,
                                    uint32_t* index) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const uint32_t e = static_cast<uint32_t>(i);
  const RadixKey k = MakeRadixKey(keys, e);
  out[i] = GatherBits(k.lo, mask.lo, GatherBits(k.mid, mask.mid, GatherBits(k.hi, mask.hi, 0)));
  index[i] = e;
}

// Sort items of the packed path: each entry's 8-byte prefix from its key.
__global__ void ItemsFromIndexKernel(KeyArrays keys, const uint32_t* index, uint64_t n,
                                     SortItem* items) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < n) items[i] = keys.MakeItem(index[i]);
}

__global__ void ItemsFromRadixKernel(const RadixKey* keys, const uint32_t* index, uint64_t n,
                                     SortItem* items) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < n) items[i] = SortItem{keys[i].hi, index[i]};
}

// Whether a job sorts with the radix path: its user keys all have one
// length of 1 to 16 bytes. ACCELKV_GPU_SORT=merge|radix forces the merge sort
// (measurements), or the radix path where it applies; =radix-wide also
// sorts the whole 192-bit keys when their differing bits would fit a
// packed 64-bit key (AllowPackedRadixSort).
bool UseRadixSort(const KeySortInput& in) {
  const bool fits = in.fixed_key_size > 8 && in.fixed_key_size <= 8 + 16;
  const char* forced = std::getenv("ACCELKV_GPU_SORT");
  if (forced != nullptr && std::strcmp(forced, "merge") == 0) return false;
  return fits;
}
bool AllowPackedRadixSort() {
  const char* forced = std::getenv("ACCELKV_GPU_SORT");
  return forced == nullptr || std::strcmp(forced, "radix-wide") != 0;
}

unsigned int Grid(uint64_t n) { return static_cast<unsigned int>((n + kThreads - 1) / kThreads); }

// The grid of a grid-stride warp-per-item kernel over n items: one warp
// per item up to `max_blocks` thread blocks (those that fit the device).
unsigned int WarpGrid(uint64_t n, unsigned int max_blocks) {
  return static_cast<unsigned int>(
      std::max<uint64_t>(1, std::min<uint64_t>(Grid(n * 32), max_blocks)));
}

Status CudaFailure(const char* stage, cudaError_t e) {
  return Status::Aborted(std::string("gpu: ") + stage + ": " + cudaGetErrorName(e),
                         cudaGetErrorString(e));
}

#define ACCELKV_CUDA_TRY(stage, expr)                         \
  do {                                                        \
    const cudaError_t err_ = (expr);                          \
    if (err_ != cudaSuccess) return CudaFailure(stage, err_); \
  } while (0)

// Stream-ordered allocations of one job, freed (and the stream drained) on
// every exit path, so the host arena is never reused under a live copy.
// A second stream whose work reads them (DrainFirst) is drained before.
class JobAllocations {
 public:
  explicit JobAllocations(cudaStream_t stream) : stream_(stream) {}
  ~JobAllocations() {
    if (first_ != nullptr) cudaStreamSynchronize(first_);
    for (void* p : ptrs_) cudaFreeAsync(p, stream_);
    cudaStreamSynchronize(stream_);
    cudaGetLastError();  // a failed job's error is reported by Run
  }
  void DrainFirst(cudaStream_t other) { first_ = other; }
  template <typename T>
  cudaError_t Alloc(T** p, uint64_t count) {
    void* raw = nullptr;
    const uint64_t bytes = count == 0 ? 1 : count * sizeof(T);
    const cudaError_t e = cudaMallocAsync(&raw, bytes, stream_);
    if (e == cudaSuccess) ptrs_.push_back(raw);
    *p = static_cast<T*>(raw);
    return e;
  }

 private:
  const cudaStream_t stream_;
  cudaStream_t first_ = nullptr;
  std::vector<void*> ptrs_;
};

// Uploads two key lists on stream (both lists' bytes in one allocation,
// both offsets in another, from mem) and gives their device views.
cudaError_t UploadKeyLists(const KeyList& a, const KeyList& b, cudaStream_t stream,
                           JobAllocations* mem, KeyListView* da, KeyListView* db) {
  uint8_t* bytes = nullptr;
  uint64_t* offsets = nullptr;
  cudaError_t e = mem->Alloc(&bytes, a.bytes.size() + b.bytes.size());
  if (e == cudaSuccess) e = mem->Alloc(&offsets, a.offsets.size() + b.offsets.size());
  if (e == cudaSuccess) {
    e = cudaMemcpyAsync(bytes, a.bytes.data(), a.bytes.size(), cudaMemcpyHostToDevice, stream);
  }
  if (e == cudaSuccess) {
    e = cudaMemcpyAsync(bytes + a.bytes.size(), b.bytes.data(), b.bytes.size(),
                        cudaMemcpyHostToDevice, stream);
  }
  if (e == cudaSuccess) {
    e = cudaMemcpyAsync(offsets, a.offsets.data(), a.offsets.size() * 8, cudaMemcpyHostToDevice,
                        stream);
  }
  if (e == cudaSuccess) {
    e = cudaMemcpyAsync(offsets + a.offsets.size(), b.offsets.data(), b.offsets.size() * 8,
                        cudaMemcpyHostToDevice, stream);
  }
  *da = KeyListView{bytes, offsets, a.size()};
  *db = KeyListView{bytes + a.bytes.size(), offsets + a.offsets.size(), b.size()};
  return e;
}

// Creates events (with flags) until *events holds n.
cudaError_t GrowEvents(std::vector<cudaEvent_t>* events, size_t n, unsigned int flags) {
  while (events->size() < n) {
    cudaEvent_t ev;
    const cudaError_t e = cudaEventCreateWithFlags(&ev, flags);
    if (e != cudaSuccess) return e;
    events->push_back(ev);
  }
  return cudaSuccess;
}

// Page-locked host memory for the large buffers: anonymous memory marked for
// transparent huge pages (a hint: ordinary pages where the kernel has none),
// registered with cudaHostRegister, which faults it in and locks it. On the
// H100 machine (THP in madvise mode) 1 GiB took 0.27 CPU-s to map, fault in,
// register, unregister and unmap, against 0.74 with cudaHostAlloc and
// cudaFreeHost, and copied to the device at the same 54 GB/s
// (bench/results/2026-11-25-h100-stage-cpu.md); that memory is 2 MiB
// aligned. Below kPinnedMapMin bytes: cudaHostAlloc.
constexpr size_t kPinnedMapMin = size_t{4} << 20;

// The bytes PinnedMap(bytes) maps (0: none, cudaHostAlloc).
size_t PinnedMapped(size_t bytes) {
  return bytes < kPinnedMapMin ? 0 : AlignUp(bytes, kHugePageSize);
}

cudaError_t PinnedMap(size_t bytes, void** p) {
  *p = nullptr;
  const size_t size = PinnedMapped(bytes);
  if (size == 0) return cudaHostAlloc(p, std::max<size_t>(bytes, 1), cudaHostAllocDefault);
  void* q = MapHugePages(size);
  if (q == nullptr) return cudaErrorMemoryAllocation;
  const cudaError_t e = cudaHostRegister(q, size, cudaHostRegisterDefault);
  if (e != cudaSuccess) {
    munmap(q, size);
    return e;
  }
  *p = q;
  return cudaSuccess;
}

// Frees what PinnedMap(bytes) returned (p may be nullptr).
void PinnedUnmap(void* p, size_t bytes) {
  if (p == nullptr) return;
  const size_t mapped = PinnedMapped(bytes);
  if (mapped == 0) {
    cudaFreeHost(p);
    return;
  }
  cudaHostUnregister(p);
  munmap(p, mapped);
}

// A pinned host buffer grown on demand and reused, 4 KiB aligned: the file
// arena takes O_DIRECT reads straight into it (job_input.cc, direct reads)
// and the output buffer feeds O_DIRECT writes straight from it
// (device_encoder.cc, direct writes). Its memory comes from PinnedMap;
// cudaHostAlloc (small buffers) returns page-aligned memory in practice;
// should it not, the buffer is allocated again 4 KiB larger and used from
// its first aligned byte. Pinning and unpinning cost CPU time in
// proportion to the bytes, and a database's jobs grow a little at a time
// as its levels fill: re-pinning the output buffer for each new largest
// job took 1.0 of the executor's 5.8 CPU-s in a 20M-key fillrandom under
// stress (bench/results/2026-11-25-h100-stage-cpu.md). So it grows by at
// least half its size (to a multiple of 64 KiB; exactly when that much
// cannot be pinned), which bounds the bytes pinned over all growth to
// about 3x the largest job.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { PinnedUnmap(raw_, raw_bytes_); }
  Status Get(uint64_t bytes, const char* stage, uint8_t** p) {
    if (bytes > capacity_) {
      const uint64_t grown = AlignUp(std::max(bytes, capacity_ + capacity_ / 2), kGrowthUnit);
      PinnedUnmap(raw_, raw_bytes_);
      raw_ = nullptr;
      raw_bytes_ = 0;
      data_ = nullptr;
      capacity_ = 0;
      uint64_t n = std::max<uint64_t>(grown, 1);
      void* raw = nullptr;
      cudaError_t e = PinnedMap(n, &raw);
      if (e != cudaSuccess && n > bytes) {
        cudaGetLastError();  // not sticky: try the exact size
        n = std::max<uint64_t>(bytes, 1);
        e = PinnedMap(n, &raw);
      }
      ACCELKV_CUDA_TRY(stage, e);
      uint64_t raw_bytes = n;
      if (!IsAligned(reinterpret_cast<uintptr_t>(raw), kAlignment)) {
        PinnedUnmap(raw, raw_bytes);
        raw = nullptr;
        raw_bytes = n + kAlignment - 1;
        ACCELKV_CUDA_TRY(stage, PinnedMap(raw_bytes, &raw));
      }
      raw_bytes_ = raw_bytes;
      raw_ = static_cast<uint8_t*>(raw);
      data_ = raw_ + (AlignUp(reinterpret_cast<uintptr_t>(raw), kAlignment) -
                      reinterpret_cast<uintptr_t>(raw));
      capacity_ = n;
    }
    *p = data_;
    return Status::OK();
  }

 private:
  static constexpr uintptr_t kAlignment = kDirectIoAlignment;
  static constexpr uint64_t kGrowthUnit = uint64_t{64} << 10;
  uint8_t* raw_ = nullptr;  // from PinnedMap(raw_bytes_)
  uint64_t raw_bytes_ = 0;
  uint8_t* data_ = nullptr;  // its first 4 KiB-aligned byte
  uint64_t capacity_ = 0;
};

class CudaKeySortDevice final : public KeySortDevice {
 public:
  // crc_tables: the device's copy of the CRC32C tables (crc32c_device.h);
  // mailbox, d_mailbox: the mailbox (pinned, mapped) and the device's
  // pointer to it; max_blocks: thread blocks of kThreads that fit the
  // device at once. Owns all three.
  CudaKeySortDevice(cudaStream_t stream, uint64_t budget, std::string name,
                    Crc32cTables* crc_tables, Mailbox* mailbox, Mailbox* d_mailbox,
                    unsigned int max_blocks)
      : stream_(stream),
        budget_(budget),
        name_(std::move(name)),
        crc_tables_(crc_tables),
        mailbox_(mailbox),
        d_mailbox_(d_mailbox),
        max_blocks_(max_blocks) {
    for (cudaEvent_t& e : events_) cudaEventCreate(&e);
  }
  ~CudaKeySortDevice() override {
    ReleaseInput();
    cudaStreamSynchronize(stream_);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    for (cudaEvent_t e : stage_events_) cudaEventDestroy(e);
    if (copy_stream_ != nullptr) {
      cudaStreamSynchronize(copy_stream_);
      cudaStreamDestroy(copy_stream_);
    }
    if (verify_stream_ != nullptr) {
      cudaStreamSynchronize(verify_stream_);
      cudaStreamDestroy(verify_stream_);
    }
    for (cudaEvent_t e : encode_events_) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    if (keys_event_ != nullptr) cudaEventDestroy(keys_event_);
    for (cudaEvent_t e : plan_events_) cudaEventDestroy(e);
    cudaFreeHost(mailbox_);
    cudaFree(crc_tables_);
    cudaStreamDestroy(stream_);
  }

  const char* Name() const override { return name_.c_str(); }
  uint64_t MemoryBudget() const override { return budget_; }

  // Drains the stream first: no staged copy from the arena may be in
  // flight while the caller writes it or Get reallocates it.
  Status HostArena(uint64_t bytes, uint8_t** arena) override {
    ACCELKV_CUDA_TRY("alloc", DrainCopiesBack());
    CancelStaging();
    ACCELKV_CUDA_TRY("alloc", cudaStreamSynchronize(stream_));
    return arena_.Get(bytes, "alloc", arena);
  }

  Status BeginStaging(const uint8_t* arena, uint64_t size) override {
    cudaGetLastError();  // clear a non-sticky error left by an earlier job
    ReleaseInput();
    const cudaError_t e = AllocResident(&dev_.arena, size);
    if (e != cudaSuccess) {
      ReleaseInput();
      return CudaFailure("copy_in", e);
    }
    staged_.Begin(arena, size);
    staged_arena_ = arena;
    return Status::OK();
  }

  // One copy on the stream between a pair of events (their elapsed times
  // sum to the staged copies' device time in DecodeKeys).
  Status StageRange(uint64_t offset, uint64_t size) override {
    Status s = staged_.Add(offset, size);
    if (!s.ok()) return s;
    const size_t k = 2 * (staged_.ranges() - 1);
    cudaError_t e = GrowEvents(&stage_events_, k + 2, cudaEventDefault);
    if (e == cudaSuccess) e = cudaEventRecord(stage_events_[k], stream_);
    if (e == cudaSuccess && size > 0) {
      e = cudaMemcpyAsync(dev_.arena + offset, staged_arena_ + offset, size, cudaMemcpyHostToDevice,
                          stream_);
    }
    if (e == cudaSuccess) e = cudaEventRecord(stage_events_[k + 1], stream_);
    if (e != cudaSuccess) {
      CancelStaging();
      return CudaFailure("copy_in", e);
    }
    return Status::OK();
  }

  void CancelStaging() override {
    if (!staged_.active()) return;
    cudaStreamSynchronize(stream_);  // no copy from the host arena in flight
    ReleaseInput();
  }
  Status HostKeyArena(uint64_t bytes, uint8_t** arena) override {
    ACCELKV_CUDA_TRY("alloc", DrainCopiesBack());  // none may still write the buffer
    return key_arena_.Get(bytes, "alloc", arena);
  }

  Status WaitDecodedKeys(std::map<std::string, uint64_t>* stage_micros) override {
    if (!keys_pending_) return Status::OK();
    const auto t = std::chrono::steady_clock::now();
    const cudaError_t e = DrainCopiesBack();
    (*stage_micros)["keys_wait"] += MicrosSince(t);
    if (e != cudaSuccess) {
      ReleaseInput();
      return CudaFailure("decode", e);
    }
    return Status::OK();
  }
  Status HostOutput(uint64_t bytes, uint8_t** out) override {
    return out_.Get(bytes, "encode", out);
  }

  Status EncodeBlocks(const EncodeJob& job, uint64_t first_block, uint64_t end_block, uint8_t* out,
                      std::map<std::string, uint64_t>* stage_micros) override {
    cudaGetLastError();
    Status s = held_.Check(job);
    if (s.ok() && InjectedFailure() == GpuStage::kEncode && end_block == job.blocks.size()) {
      s = Injected(GpuStage::kEncode);
    }
    if (s.ok()) {
      JobAllocations mem(stream_);  // drains the stream before anything is freed
      s = EncodeStages(job, first_block, end_block, out, stage_micros, &mem);
    }
    if (!s.ok()) ReleaseInput();  // a failed call releases the input
    return s;
  }

  void ReleaseEncodeInput() override {
    if (held_.held()) ReleaseInput();
  }

  Status DecodeKeys(const DecodeInput& in, DecodeOutput* out,
                    std::map<std::string, uint64_t>* stage_micros) override {
    cudaGetLastError();  // clear a non-sticky error left by an earlier job
    // The file arena BeginStaging/StageRange put on the device, if it is
    // this input's and whole: kept, with the copies' events to time.
    const bool staged = staged_.Covers(in.arena, in.arena_size) && dev_.arena != nullptr;
    const uint64_t staged_copies = staged ? staged_.ranges() : 0;  // event pairs to time
    if (staged) {
      staged_.Reset();
    } else {
      ReleaseInput();
    }
    Status s;
    {
      JobAllocations mem(stream_);  // drains the stream on every exit path
      s = DecodeStages(in, staged, staged_copies, out, stage_micros, &mem);
    }
    if (s.ok()) {
      decoded_.Hold(in.arena, in.arena_size, in.key_arena, in.key_arena_size);
    } else {
      ReleaseInput();
    }
    return s;
  }

  Status Run(const KeySortInput& in, KeySortOutput* out,
             std::map<std::string, uint64_t>* stage_micros) override {
    cudaGetLastError();   // clear a non-sticky error left by an earlier job
    plan_count_ = 0;      // WaitPlan refuses every position until PlanStage
    if (plan_pending_) {  // an earlier plan's copies, left by a failed job
      ACCELKV_CUDA_TRY("alloc", DrainCopiesBack());
    }
    // The arenas DecodeKeys left on the device, if they are this input's.
    const bool resident =
        decoded_.Holds(in.arena, in.arena_size, in.key_arena, in.key_arena_size) &&
        dev_.arena != nullptr && dev_.entries == in.num_entries();
    if (resident) {
      decoded_.Release();
      held_.Release();
    } else {
      ReleaseInput();
    }
    out->plan = nullptr;
    out->boundary_starts.clear();
    out->bad_block = ~uint64_t{0};
    // Resident: the value arrays are on the device (DecodeKeys), whatever
    // the host holds.
    Status s = resident ? Status::OK() : in.CheckEncodeInputs();
    if (s.ok()) {
      JobAllocations mem(stream_);  // drains the stream on every exit path
      s = RunStages(in, resident, out, stage_micros, &mem);
    }
    if (s.ok() && in.keep_for_encode) {
      held_.Hold(in);
    } else {
      ReleaseInput();
    }
    return s;
  }

 private:
  static Status Injected(GpuStage stage) {
    return Status::Aborted("gpu: injected failure at", GpuStageName(stage));
  }

  // What stays on the device from DecodeKeys (or Run) to EncodeBlocks: the
  // two arenas, the per-entry arrays and, after a Run with keep_for_encode,
  // the kept order, and the output buffer of the EncodeBlocks calls. Freed
  // by ReleaseEncodeInput, a failed EncodeBlocks, the next DecodeKeys or
  // Run (unless it takes them over) or the destructor.
  struct Resident {
    uint8_t* arena = nullptr;
    uint8_t* key_arena = nullptr;
    uint64_t* key_offset = nullptr;
    uint32_t* key_size = nullptr;
    uint64_t* value_offset = nullptr;
    uint32_t* value_size = nullptr;
    uint32_t* kept = nullptr;
    uint8_t* out = nullptr;  // the encoded data blocks (first EncodeBlocks call)
    uint64_t entries = 0;
    uint64_t kept_count = 0;
    uint64_t out_size = 0;
  };

  template <typename T>
  cudaError_t AllocResident(T** p, uint64_t count) {
    void* raw = nullptr;
    const cudaError_t e = cudaMallocAsync(&raw, std::max<uint64_t>(count * sizeof(T), 1), stream_);
    *p = e == cudaSuccess ? static_cast<T*>(raw) : nullptr;
    return e;
  }
  // Allocates what stays on the device; the file arena unless staging
  // left it there.
  cudaError_t AllocInput(uint64_t arena_size, uint64_t key_arena_size, uint64_t entries) {
    cudaError_t e;
    if (dev_.arena == nullptr && (e = AllocResident(&dev_.arena, arena_size)) != cudaSuccess) {
      return e;
    }
    if ((e = AllocResident(&dev_.key_arena, key_arena_size)) != cudaSuccess) return e;
    if ((e = AllocResident(&dev_.key_offset, entries)) != cudaSuccess) return e;
    if ((e = AllocResident(&dev_.key_size, entries)) != cudaSuccess) return e;
    if ((e = AllocResident(&dev_.value_offset, entries)) != cudaSuccess) return e;
    if ((e = AllocResident(&dev_.value_size, entries)) != cudaSuccess) return e;
    if ((e = AllocResident(&dev_.kept, entries)) != cudaSuccess) return e;
    dev_.entries = entries;
    return cudaSuccess;
  }
  // Waits for the copies back on copy_stream_ that may still run:
  // DecodeStages' keys and entry arrays, PlanStage's plan parts.
  cudaError_t DrainCopiesBack() {
    if (!keys_pending_ && !plan_pending_) return cudaSuccess;
    keys_pending_ = false;
    plan_pending_ = false;
    return cudaStreamSynchronize(copy_stream_);
  }

  void ReleaseInput() {
    DrainCopiesBack();  // no copy back reads what is freed here
    void* ptrs[] = {dev_.arena,        dev_.key_arena,  dev_.key_offset, dev_.key_size,
                    dev_.value_offset, dev_.value_size, dev_.kept,       dev_.out};
    for (void* p : ptrs) {
      if (p != nullptr) cudaFreeAsync(p, stream_);
    }
    dev_ = Resident();
    held_.Release();
    decoded_.Release();
    staged_.Reset();
  }

  // DecodeKeys: the file arena in (it stays for Run) unless it was staged
  // (staged_copies copies, timed by stage_events_), the key arena built on
  // the device, then the keys and the entry arrays back to the host.
  Status DecodeStages(const DecodeInput& in, bool staged, uint64_t staged_copies, DecodeOutput* out,
                      std::map<std::string, uint64_t>* stage_micros, JobAllocations* mem) {
    const uint64_t n = in.entries;
    const uint64_t nb = in.blocks.size();
    DecodeBlock* d_blocks = nullptr;
    unsigned long long* d_bad = nullptr;
    ACCELKV_CUDA_TRY("decode", AllocInput(in.arena_size, in.key_arena_size, n));
    ACCELKV_CUDA_TRY("decode", mem->Alloc(&d_blocks, nb));
    ACCELKV_CUDA_TRY("decode", mem->Alloc(&d_bad, 1));
    uint64_t* const d_key_offset = dev_.key_offset;
    uint32_t* const d_key_size = dev_.key_size;
    uint64_t* const d_value_offset = dev_.value_offset;
    uint32_t* const d_value_size = dev_.value_size;

    uint64_t staged_micros = 0;
    if (staged) {
      // The wait for the staged copies still in flight (only they and
      // stream-ordered allocations are queued; a stream sync blocks rather
      // than spins) is what the overlap left on the critical path; their
      // events give the copies' device time.
      const auto w = std::chrono::steady_clock::now();
      ACCELKV_CUDA_TRY("copy_in", cudaStreamSynchronize(stream_));
      (*stage_micros)["copy_in_wait"] += MicrosSince(w);
      for (uint64_t i = 0; i < staged_copies; ++i) {
        float ms = 0;
        ACCELKV_CUDA_TRY("copy_in",
                         cudaEventElapsedTime(&ms, stage_events_[2 * i], stage_events_[2 * i + 1]));
        staged_micros += static_cast<uint64_t>(ms * 1000.0f);
      }
    }
    ACCELKV_CUDA_TRY("copy_in", cudaEventRecord(events_[0], stream_));
    if (!staged) {
      ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(dev_.arena, in.arena, in.arena_size,
                                                  cudaMemcpyHostToDevice, stream_));
    }
    ACCELKV_CUDA_TRY("copy_in",
                     cudaMemcpyAsync(d_blocks, in.blocks.data(), nb * sizeof(DecodeBlock),
                                     cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("copy_in", cudaMemsetAsync(d_bad, 0xff, sizeof(*d_bad), stream_));
    ACCELKV_CUDA_TRY("copy_in", cudaEventRecord(events_[1], stream_));

    const auto t0 = std::chrono::steady_clock::now();
    if (n > 0) {
      const uint32_t lanes = DecodeLanesPerEntry(in.blocks.data(), nb);
      const uint32_t shift = static_cast<uint32_t>(__builtin_ctz(lanes));
      DecodeKeysKernel<<<Grid(n * lanes), kThreads, 0, stream_>>>(
          dev_.arena, dev_.key_arena, d_blocks, nb, n, shift, d_key_offset, d_key_size,
          d_value_offset, d_value_size, d_bad);
      ACCELKV_CUDA_TRY("decode", cudaGetLastError());
    }
    out->key_offset->resize(n);
    out->key_size->resize(n);
    if (out->values_to_host) {
      out->value_offset->resize(n);
      out->value_size->resize(n);
    } else {
      out->value_offset->clear();  // they stay on the device for Run
      out->value_size->clear();
    }
    // The keys and the entry arrays go back on copy_stream_ once the kernel
    // ran, into pinned memory (HostVector), and the call returns without
    // waiting for them: they overlap Run's sort and dedup on stream_, and
    // the host waits only where it reads them (WaitDecodedKeys). Nothing
    // on stream_ writes what they read until ReleaseInput, which drains
    // them first. The lowest bad entry, which the call does wait for, goes
    // to the mailbox, not through the copy engine behind them.
    PublishKernel<<<1, 32, 0, stream_>>>(d_bad, &d_mailbox_->bad_entry, 1);
    ACCELKV_CUDA_TRY("decode", cudaGetLastError());
    ACCELKV_CUDA_TRY("decode", EnsureCopyStream());
    ACCELKV_CUDA_TRY("decode", cudaEventRecord(keys_event_, stream_));
    ACCELKV_CUDA_TRY("decode", cudaStreamWaitEvent(copy_stream_, keys_event_, 0));
    keys_pending_ = true;
    ACCELKV_CUDA_TRY("decode", cudaMemcpyAsync(in.key_arena, dev_.key_arena, in.key_arena_size,
                                               cudaMemcpyDeviceToHost, copy_stream_));
    ACCELKV_CUDA_TRY("decode", cudaMemcpyAsync(out->key_offset->data(), d_key_offset, n * 8,
                                               cudaMemcpyDeviceToHost, copy_stream_));
    ACCELKV_CUDA_TRY("decode", cudaMemcpyAsync(out->key_size->data(), d_key_size, n * 4,
                                               cudaMemcpyDeviceToHost, copy_stream_));
    if (out->values_to_host) {
      ACCELKV_CUDA_TRY("decode", cudaMemcpyAsync(out->value_offset->data(), d_value_offset, n * 8,
                                                 cudaMemcpyDeviceToHost, copy_stream_));
      ACCELKV_CUDA_TRY("decode", cudaMemcpyAsync(out->value_size->data(), d_value_size, n * 4,
                                                 cudaMemcpyDeviceToHost, copy_stream_));
    }
    ACCELKV_CUDA_TRY("decode", cudaStreamSynchronize(stream_));
    const unsigned long long bad = mailbox_->bad_entry;
    out->bad_entry = bad == ~0ull ? ~uint64_t{0} : static_cast<uint64_t>(bad);
    float ms = 0;
    ACCELKV_CUDA_TRY("decode", cudaEventElapsedTime(&ms, events_[0], events_[1]));
    (*stage_micros)["copy_in"] += staged_micros + static_cast<uint64_t>(ms * 1000.0f);
    (*stage_micros)["gpu_decode"] += MicrosSince(t0);
    return Status::OK();
  }

  // One chunk: its planned blocks in, the kernel into the job's device
  // output buffer (allocated by the first call, kept to the release) part
  // by part, each part's bytes back into out while the next part runs (one
  // copy per contiguous run of its blocks), then the filters and theirs.
  Status EncodeStages(const EncodeJob& job, uint64_t first_block, uint64_t end_block, uint8_t* out,
                      std::map<std::string, uint64_t>* stage_micros, JobAllocations* mem) {
    const auto t0 = std::chrono::steady_clock::now();
    Status s = CheckEncodeJob(job, first_block, end_block, dev_.kept_count);
    if (!s.ok()) return s;
    if (dev_.out == nullptr || dev_.out_size < job.out_size) {
      if (dev_.out != nullptr) cudaFreeAsync(dev_.out, stream_);
      dev_.out = nullptr;
      dev_.out_size = 0;
      ACCELKV_CUDA_TRY("encode", AllocResident(&dev_.out, job.out_size));
      dev_.out_size = job.out_size;
    }
    const uint64_t nb = end_block - first_block;
    if (nb > 0) {
      // The copies back run on copy_stream_, each part's after its kernel
      // (an event), so part p's copy overlaps part p + 1's kernel. Every
      // exit drains both streams: no copy into `out` outlives the call.
      ACCELKV_CUDA_TRY("encode", EnsureCopyStream());
      struct Drain {
        cudaStream_t copy;
        ~Drain() { cudaStreamSynchronize(copy); }
      } drain{copy_stream_};
      EncodeBlock* d_blocks = nullptr;
      ACCELKV_CUDA_TRY("encode", mem->Alloc(&d_blocks, nb));
      ACCELKV_CUDA_TRY("encode",
                       cudaMemcpyAsync(d_blocks, job.blocks.data() + first_block,
                                       nb * sizeof(EncodeBlock), cudaMemcpyHostToDevice, stream_));
      const EncodeSources src{dev_.arena,    dev_.key_arena,    dev_.kept,      dev_.key_offset,
                              dev_.key_size, dev_.value_offset, dev_.value_size};
      // Parts of about kEncodePartBytes of output, at most kEncodeParts, of
      // at least kMinPartBlocks blocks (one part when the chunk has fewer).
      uint64_t chunk_bytes = 0;
      for (uint64_t i = first_block; i < end_block; ++i) {
        chunk_bytes += EncodedBlockSize(job.blocks[i]) + 5;
      }
      const uint64_t max_parts =
          std::max<uint64_t>(1, std::min<uint64_t>(kEncodeParts, nb / kMinPartBlocks));
      const uint64_t parts = std::clamp<uint64_t>(chunk_bytes / kEncodePartBytes, 1, max_parts);
      for (uint64_t p = 0; p < parts; ++p) {
        const uint64_t b0 = first_block + nb * p / parts;
        const uint64_t b1 = first_block + nb * (p + 1) / parts;
        std::vector<std::pair<uint64_t, uint64_t>> spans;  // offset, size with trailer
        spans.reserve(b1 - b0);
        uint64_t large = 0;
        std::vector<HugeBlock> huge;
        uint64_t huge_tbs = 0;
        for (uint64_t i = b0; i < b1; ++i) {
          const uint64_t size = EncodedBlockSize(job.blocks[i]);
          spans.emplace_back(job.blocks[i].out_offset, size + 5);
          if (size >= kHugeBlockBytes) {
            // A block is under 4 GiB (TableBuilder's guard), so tbs < 2^15.
            const auto tbs = static_cast<uint32_t>((size + kHugeSliceBytes - 1) / kHugeSliceBytes);
            huge.push_back(
                HugeBlock{static_cast<uint32_t>(i - b0), static_cast<uint32_t>(huge_tbs), tbs});
            huge_tbs += tbs;
          } else if (size >= kLargeBlockBytes) {
            ++large;
          }
        }
        const EncodeBlock* part_blocks = d_blocks + (b0 - first_block);
        if (large + huge.size() < b1 - b0) {
          EncodeBlocksKernel<<<WarpGrid(b1 - b0, max_blocks_), kThreads, 0, stream_>>>(
              crc_tables_, src, part_blocks, b1 - b0, dev_.out);
          ACCELKV_CUDA_TRY("encode", cudaGetLastError());
        }
        if (large > 0) {
          const auto grid = static_cast<unsigned int>(std::min<uint64_t>(large, max_blocks_));
          EncodeLargeBlocksKernel<<<grid, kThreads, 0, stream_>>>(crc_tables_, src, part_blocks,
                                                                  b1 - b0, dev_.out);
          ACCELKV_CUDA_TRY("encode", cudaGetLastError());
        }
        if (!huge.empty()) {
          ACCELKV_CUDA_TRY("encode", EncodeHugeBlocks(huge, huge_tbs, src, part_blocks, mem));
        }
        ACCELKV_CUDA_TRY("encode", CopyBackAfterKernels(spans, p, out));
      }
      // The chunk's tables' filters, once their data blocks' kernels ran
      // (the bits kernel's atomics touch the words around each filter,
      // leaving a data block's bytes as they are).
      uint64_t first_filter = 0;
      uint64_t end_filter = 0;
      FiltersOfBlocks(job, first_block, end_block, &first_filter, &end_filter);
      const uint64_t nf = end_filter - first_filter;
      if (nf > 0) {
        EncodeFilter* d_filters = nullptr;
        ACCELKV_CUDA_TRY("encode", mem->Alloc(&d_filters, nf));
        ACCELKV_CUDA_TRY(
            "encode", cudaMemcpyAsync(d_filters, job.filters.data() + first_filter,
                                      nf * sizeof(EncodeFilter), cudaMemcpyHostToDevice, stream_));
        FilterInitKernel<<<static_cast<unsigned int>(nf), kThreads, 0, stream_>>>(d_filters,
                                                                                  dev_.out);
        ACCELKV_CUDA_TRY("encode", cudaGetLastError());
        const uint64_t lo = job.blocks[first_block].first;
        const uint64_t kn = job.blocks[end_block - 1].first + job.blocks[end_block - 1].n - lo;
        FilterBitsKernel<<<Grid(kn), kThreads, 0, stream_>>>(src, d_filters, nf, lo, kn, dev_.out);
        ACCELKV_CUDA_TRY("encode", cudaGetLastError());
        FilterCrcKernel<<<WarpGrid(nf, max_blocks_), kThreads, 0, stream_>>>(crc_tables_, d_filters,
                                                                             nf, dev_.out);
        ACCELKV_CUDA_TRY("encode", cudaGetLastError());
        std::vector<std::pair<uint64_t, uint64_t>> spans;
        spans.reserve(nf);
        for (uint64_t i = first_filter; i < end_filter; ++i) {
          spans.emplace_back(job.filters[i].out_offset, EncodedFilterSize(job.filters[i]) + 5);
        }
        ACCELKV_CUDA_TRY("encode", CopyBackAfterKernels(spans, kEncodeParts, out));
      }
      ACCELKV_CUDA_TRY("encode", cudaStreamSynchronize(copy_stream_));
    }
    ACCELKV_CUDA_TRY("encode", cudaStreamSynchronize(stream_));
    (*stage_micros)["gpu_encode"] += MicrosSince(t0);
    return Status::OK();
  }

  // resident: the arenas and the entry arrays are on the device already
  // (DecodeKeys).
  Status RunStages(const KeySortInput& in, bool resident, KeySortOutput* out,
                   std::map<std::string, uint64_t>* stage_micros, JobAllocations* mem) {
    const GpuStage fail = InjectedFailure();
    const uint64_t n = in.num_entries();
    const uint64_t nb = in.blocks.size();
    const uint32_t ns = static_cast<uint32_t>(in.snapshots.size());

    // alloc
    if (fail == GpuStage::kAlloc) return Injected(fail);
    BlockSpan* d_blocks = nullptr;
    uint8_t* d_flags = nullptr;
    uint64_t* d_snapshots = nullptr;
    SortItem* d_items = nullptr;
    uint8_t* d_keep = nullptr;
    uint32_t* d_index = nullptr;
    Counters* d_counters = nullptr;
    if (!resident) ACCELKV_CUDA_TRY("alloc", AllocInput(in.arena_size, in.key_arena_size, n));
    uint64_t* const d_key_offset = dev_.key_offset;
    uint32_t* const d_key_size = dev_.key_size;
    uint32_t* const d_kept = dev_.kept;
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_blocks, nb));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_flags, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_snapshots, ns));
    // The deeper levels' file ranges, for the dedup's base-level test
    // (uploaded below, with the snapshots).
    const uint32_t levels = static_cast<uint32_t>(in.deeper_level_end.size());
    uint32_t* d_level_end = nullptr;
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_level_end, levels));
    DeeperLevelsView d_deeper{{}, {}, d_level_end, levels};
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_items, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_keep, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_index, n));
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_counters, 1));
    const KeyArrays keys{dev_.key_arena, d_key_offset, d_key_size};
    const bool radix = UseRadixSort(in);
    RadixKey* d_radix[2] = {nullptr, nullptr};
    uint32_t* d_radix_index = nullptr;  // with d_index, the values' double buffer
    if (radix) {
      ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_radix[0], n));
      ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_radix[1], n));
      ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_radix_index, n));
    }
    cub::DoubleBuffer<RadixKey> radix_keys(d_radix[0], d_radix[1]);
    cub::DoubleBuffer<uint32_t> radix_values(d_radix_index, d_index);
    size_t sort_temp = 0;
    size_t select_temp = 0;
    // The packed path (PackRadixKeysKernel) sorts 64-bit keys in the same
    // buffers (24 bytes per entry each).
    cub::DoubleBuffer<uint64_t> packed_keys(reinterpret_cast<uint64_t*>(d_radix[0]),
                                            reinterpret_cast<uint64_t*>(d_radix[1]));
    unsigned long long* d_mask = nullptr;
    if (n > 0 && radix) {
      ACCELKV_CUDA_TRY(
          "alloc", cub::DeviceRadixSort::SortPairs(nullptr, sort_temp, radix_keys, radix_values, n,
                                                   RadixKeyDigits{}, stream_));
      size_t packed_temp = 0;
      ACCELKV_CUDA_TRY("alloc", cub::DeviceRadixSort::SortPairs(nullptr, packed_temp, packed_keys,
                                                                radix_values, n, 0, 64, stream_));
      sort_temp = std::max(sort_temp, packed_temp);
      ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_mask, 3));
    } else if (n > 0) {
      ACCELKV_CUDA_TRY(
          "alloc", cub::DeviceMergeSort::SortKeys(nullptr, sort_temp, d_items,
                                                  static_cast<int64_t>(n), LessOp{keys}, stream_));
    }
    if (n > 0) {  // an empty job sorts and selects nothing
      ACCELKV_CUDA_TRY("alloc", cub::DeviceSelect::Flagged(nullptr, select_temp, d_index, d_keep,
                                                           d_kept, &d_counters->num_kept,
                                                           static_cast<int64_t>(n), stream_));
    }
    uint8_t* d_temp = nullptr;
    ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_temp, std::max(sort_temp, select_temp)));

    // copy_in
    if (fail == GpuStage::kCopyIn) return Injected(fail);
    ACCELKV_CUDA_TRY("copy_in", cudaEventRecord(events_[0], stream_));
    if (!resident) {
      ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(dev_.arena, in.arena, in.arena_size,
                                                  cudaMemcpyHostToDevice, stream_));
      ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(dev_.key_arena, in.key_arena, in.key_arena_size,
                                                  cudaMemcpyHostToDevice, stream_));
      ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_key_offset, in.key_offset.data(), n * 8,
                                                  cudaMemcpyHostToDevice, stream_));
      ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_key_size, in.key_size.data(), n * 4,
                                                  cudaMemcpyHostToDevice, stream_));
      if (in.keep_for_encode) {
        ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(dev_.value_offset, in.value_offset->data(),
                                                    n * 8, cudaMemcpyHostToDevice, stream_));
        ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(dev_.value_size, in.value_size->data(), n * 4,
                                                    cudaMemcpyHostToDevice, stream_));
      }
    }
    ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_blocks, in.blocks.data(), nb * sizeof(BlockSpan),
                                                cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("copy_in",
                     cudaMemcpyAsync(d_flags, in.flags.data(), n, cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("copy_in", UploadKeyLists(in.deeper_smallest, in.deeper_largest, stream_, mem,
                                               &d_deeper.smallest, &d_deeper.largest));
    ACCELKV_CUDA_TRY("copy_in",
                     cudaMemcpyAsync(d_level_end, in.deeper_level_end.data(), uint64_t{levels} * 4,
                                     cudaMemcpyHostToDevice, stream_));
    ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_snapshots, in.snapshots.data(), ns * 8,
                                                cudaMemcpyHostToDevice, stream_));
    Counters init{~0ull, 0, 0};
    ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_counters, &init, sizeof(init),
                                                cudaMemcpyHostToDevice, stream_));
    // The blocks verify gives a thread block each (a pageable copy: staged
    // at once, with no wait for the stream).
    std::vector<uint32_t> large;
    for (uint64_t b = 0; b < nb; ++b) {
      if (in.blocks[b].size >= kLargeBlockBytes) large.push_back(static_cast<uint32_t>(b));
    }
    uint32_t* d_large = nullptr;
    if (!large.empty()) {
      ACCELKV_CUDA_TRY("alloc", mem->Alloc(&d_large, large.size()));
      ACCELKV_CUDA_TRY("copy_in", cudaMemcpyAsync(d_large, large.data(), large.size() * 4,
                                                  cudaMemcpyHostToDevice, stream_));
    }
    ACCELKV_CUDA_TRY("copy_in", cudaEventRecord(events_[1], stream_));

    // verify: on its own stream, beside the sort and the dedup (its
    // result, the lowest bad block, is read with the counters at copy_out,
    // which waits for it); every exit drains it before freeing what it reads.
    if (fail == GpuStage::kVerify) return Injected(fail);
    ACCELKV_CUDA_TRY("verify", EnsureVerifyStream());
    ACCELKV_CUDA_TRY("verify", cudaStreamWaitEvent(verify_stream_, events_[1], 0));
    mem->DrainFirst(verify_stream_);
    if (nb > large.size()) {
      VerifyKernel<<<WarpGrid(nb, max_blocks_), kThreads, 0, verify_stream_>>>(
          crc_tables_, dev_.arena, d_blocks, nb, d_counters);
      ACCELKV_CUDA_TRY("verify", cudaGetLastError());
    }
    if (!large.empty()) {
      const auto grid = static_cast<unsigned int>(std::min<uint64_t>(large.size(), max_blocks_));
      VerifyLargeBlocksKernel<<<grid, kThreads, 0, verify_stream_>>>(
          crc_tables_, dev_.arena, d_blocks, d_large, large.size(), d_counters);
      ACCELKV_CUDA_TRY("verify", cudaGetLastError());
    }
    ACCELKV_CUDA_TRY("verify", cudaEventRecord(events_[2], verify_stream_));

    // sort
    if (fail == GpuStage::kSort) return Injected(fail);
    int packed_bits = -1;  // the packed path's key bits, or -1: the whole keys
    if (n > 0 && radix && AllowPackedRadixSort()) {
      // The bits that differ between entries: the host needs their count
      // to choose the path (one small copy back and wait, ahead of the sort).
      const auto t = std::chrono::steady_clock::now();
      ACCELKV_CUDA_TRY("sort", cudaMemsetAsync(d_mask, 0, 3 * sizeof(*d_mask), stream_));
      RadixDiffKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, n, d_mask);
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
      PublishKernel<<<1, 32, 0, stream_>>>(d_mask, d_mailbox_->radix_mask, 3);
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
      ACCELKV_CUDA_TRY("sort", cudaStreamSynchronize(stream_));
      int bits = 0;
      for (int w = 0; w < 3; ++w) bits += __builtin_popcountll(mailbox_->radix_mask[w]);
      if (bits <= 64) packed_bits = bits;
      (*stage_micros)["sort_pack"] += MicrosSince(t);
    }
    if (packed_bits >= 0) {
      const RadixKey mask{mailbox_->radix_mask[0], mailbox_->radix_mask[1],
                          mailbox_->radix_mask[2]};
      PackRadixKeysKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, n, mask, packed_keys.Current(),
                                                             radix_values.Current());
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
      // No bit differs (a single entry, or only duplicates, which dedup
      // reports): already in order.
      if (packed_bits > 0) {
        ACCELKV_CUDA_TRY(
            "sort", cub::DeviceRadixSort::SortPairs(d_temp, sort_temp, packed_keys, radix_values, n,
                                                    0, packed_bits, stream_));
      }
      ItemsFromIndexKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, radix_values.Current(), n,
                                                              d_items);
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
    } else if (n > 0 && radix) {
      MakeRadixKeysKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, n, radix_keys.Current(),
                                                             radix_values.Current());
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
      ACCELKV_CUDA_TRY(
          "sort", cub::DeviceRadixSort::SortPairs(d_temp, sort_temp, radix_keys, radix_values, n,
                                                  RadixKeyDigits{}, stream_));
      ItemsFromRadixKernel<<<Grid(n), kThreads, 0, stream_>>>(radix_keys.Current(),
                                                              radix_values.Current(), n, d_items);
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
    } else if (n > 0) {
      MakeItemsKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, n, d_items);
      ACCELKV_CUDA_TRY("sort", cudaGetLastError());
      ACCELKV_CUDA_TRY(
          "sort", cub::DeviceMergeSort::SortKeys(d_temp, sort_temp, d_items,
                                                 static_cast<int64_t>(n), LessOp{keys}, stream_));
    }
    ACCELKV_CUDA_TRY("sort", cudaEventRecord(events_[3], stream_));

    // dedup
    if (fail == GpuStage::kDedup) return Injected(fail);
    if (n > 0) {
      DedupKernel<<<Grid(n), kThreads, 0, stream_>>>(keys, d_flags, d_items, n, d_snapshots, ns,
                                                     d_deeper, d_keep, d_index, d_counters);
      ACCELKV_CUDA_TRY("dedup", cudaGetLastError());
      ACCELKV_CUDA_TRY("dedup", cub::DeviceSelect::Flagged(d_temp, select_temp, d_index, d_keep,
                                                           d_kept, &d_counters->num_kept,
                                                           static_cast<int64_t>(n), stream_));
    }
    ACCELKV_CUDA_TRY("dedup", cudaEventRecord(events_[4], stream_));

    // copy_out
    if (fail == GpuStage::kCopyOut) return Injected(fail);
    const auto t0 = std::chrono::steady_clock::now();
    ACCELKV_CUDA_TRY("copy_out", cudaStreamWaitEvent(stream_, events_[2], 0));  // verify's result
    PublishKernel<<<1, 32, 0, stream_>>>(reinterpret_cast<const unsigned long long*>(d_counters),
                                         d_mailbox_->counters, 3);
    ACCELKV_CUDA_TRY("copy_out", cudaGetLastError());
    ACCELKV_CUDA_TRY("copy_out", cudaStreamSynchronize(stream_));
    Counters c;
    std::memcpy(&c, mailbox_->counters, sizeof(c));
    if (c.num_kept > n) return Status::Aborted("gpu: copy_out: kept count out of range");
    out->kept.resize(c.num_kept);
    ACCELKV_CUDA_TRY("copy_out", cudaMemcpyAsync(out->kept.data(), d_kept, c.num_kept * 4,
                                                 cudaMemcpyDeviceToHost, stream_));
    ACCELKV_CUDA_TRY("copy_out", cudaStreamSynchronize(stream_));
    const uint64_t copy_out = MicrosSince(t0);

    // Each stage from the event before it; verify and the sort both start
    // at the end of copy_in (events_[1]) and overlap.
    const char* names[4] = {"copy_in", "verify", "sort", "dedup"};
    const int from[4] = {0, 1, 1, 3};
    for (int i = 0; i < 4; ++i) {
      float ms = 0;
      ACCELKV_CUDA_TRY("copy_out", cudaEventElapsedTime(&ms, events_[from[i]], events_[i + 1]));
      (*stage_micros)[names[i]] += static_cast<uint64_t>(ms * 1000.0f);
    }
    (*stage_micros)["copy_out"] += copy_out;
    // The part of verify that ran beside the sort and the dedup (both in
    // the sums above; device busy time counts it once).
    float verify_ms = 0;
    float sort_dedup_ms = 0;
    ACCELKV_CUDA_TRY("copy_out", cudaEventElapsedTime(&verify_ms, events_[1], events_[2]));
    ACCELKV_CUDA_TRY("copy_out", cudaEventElapsedTime(&sort_dedup_ms, events_[1], events_[4]));
    (*stage_micros)["verify_overlap"] +=
        static_cast<uint64_t>(std::min(verify_ms, sort_dedup_ms) * 1000.0f);

    if (c.bad_block != ~0ull) {
      out->bad_block = c.bad_block;
      out->kept.clear();
      return Status::Corruption("block checksum mismatch");
    }
    if (c.duplicate != 0) {
      out->kept.clear();
      return Status::Corruption("gpu: compaction input holds a duplicated internal key");
    }
    dev_.kept_count = c.num_kept;
    if (in.keep_for_encode) return PlanStage(in, keys, out, stage_micros, mem);
    return Status::OK();
  }

  // The plan inputs of the kept entries (PlanKernel) and the ranges'
  // starts (BoundaryStartsKernel, waited for); the entries go back into the
  // pinned plan buffer in parts on copy_stream_ (QueuePlanCopies), and Run
  // returns without waiting for them: the planner threads wait for the
  // parts they reach (WaitPlan).
  Status PlanStage(const KeySortInput& in, const KeyArrays& keys, KeySortOutput* out,
                   std::map<std::string, uint64_t>* stage_micros, JobAllocations* mem) {
    const auto t0 = std::chrono::steady_clock::now();
    // The keys' copies back (DecodeKeys) finished during the sort; drained
    // here, so that WaitDecodedKeys after Run waits for none of the plan's
    // copies, and so that no copy of an earlier plan is still running
    // before plan_ is reused.
    ACCELKV_CUDA_TRY("plan", DrainCopiesBack());
    (*stage_micros)["keys_wait"] += MicrosSince(t0);
    const uint64_t k = out->kept.size();
    const uint32_t nb = in.boundaries.size();
    uint64_t* d_starts = nullptr;
    ACCELKV_CUDA_TRY("plan", mem->Alloc(&d_starts, nb));
    KeyListView d_gp;
    KeyListView d_bounds;
    ACCELKV_CUDA_TRY(
        "plan", UploadKeyLists(in.grandparents, in.boundaries, stream_, mem, &d_gp, &d_bounds));
    uint8_t* host = nullptr;
    Status s = plan_.Get(k * sizeof(PlanEntry), "plan", &host);
    if (!s.ok()) return s;
    uint8_t* host_starts = nullptr;
    s = plan_starts_.Get(uint64_t{nb} * 8, "plan", &host_starts);
    if (!s.ok()) return s;
    ACCELKV_CUDA_TRY("plan", EnsureCopyStream());
    // Outlives Run (its copies back run after it returns): freed on
    // copy_stream_ after them, or here on failure.
    PlanEntry* d_plan = nullptr;
    ACCELKV_CUDA_TRY(
        "plan", cudaMallocAsync(&d_plan, std::max<uint64_t>(k, 1) * sizeof(PlanEntry), stream_));
    cudaError_t e = cudaSuccess;
    if (k > 0) {
      PlanKernel<<<Grid(k), kThreads, 0, stream_>>>(keys, dev_.value_size, dev_.kept, k, d_gp,
                                                    d_bounds, d_plan);
      e = cudaGetLastError();
    }
    if (e == cudaSuccess && nb > 0) {
      BoundaryStartsKernel<<<Grid(nb), kThreads, 0, stream_>>>(d_plan, k, nb, d_starts);
      e = cudaGetLastError();
      if (e == cudaSuccess) {
        e = cudaMemcpyAsync(host_starts, d_starts, uint64_t{nb} * 8, cudaMemcpyDeviceToHost,
                            stream_);
      }
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream_);
    if (e == cudaSuccess) {
      const uint64_t* starts = reinterpret_cast<const uint64_t*>(host_starts);
      out->boundary_starts.assign(starts, starts + nb);
      e = QueuePlanCopies(host, d_plan, k, out->boundary_starts);
    }
    if (e == cudaSuccess) e = cudaFreeAsync(d_plan, copy_stream_);
    if (e != cudaSuccess) {
      DrainCopiesBack();  // no part still copies from d_plan
      cudaFreeAsync(d_plan, stream_);
      plan_parts_.clear();
      out->boundary_starts.clear();
      return CudaFailure("plan", e);
    }
    out->plan = reinterpret_cast<const PlanEntry*>(host);
    plan_count_ = k;
    (*stage_micros)["gpu_plan"] += MicrosSince(t0);
    return Status::OK();
  }

  // Queues the copies of d_plan[0, k) into host on copy_stream_, in parts,
  // each followed by an event. The parts cut each subcompaction range
  // (from starts) into up to kPlanSlices slices, and go slice by slice
  // across the ranges (every range's first slice, then every second...),
  // so each range's planner thread can start after a small part of the
  // copy; with more than kPlanParts ranges, kPlanParts equal parts in
  // order. Sets plan_parts_ (by begin) and plan_pending_.
  cudaError_t QueuePlanCopies(uint8_t* host, const PlanEntry* d_plan, uint64_t k,
                              const std::vector<uint64_t>& starts) {
    plan_parts_.clear();
    if (k == 0) return cudaSuccess;
    std::vector<uint64_t> range;
    (void)SubcompactionRangeStarts(starts, k, &range);  // the encoder refuses disorder
    const uint64_t ranges = range.size() - 1;
    // How many parts n entries make (1 to max).
    const auto parts_of = [](uint64_t n, uint64_t max) {
      return std::clamp<uint64_t>(n * sizeof(PlanEntry) / kPlanPartBytes, 1, max);
    };
    std::vector<std::pair<uint64_t, uint64_t>> order;  // [begin, end) in copy order
    if (ranges > kPlanParts) {
      const uint64_t parts = parts_of(k, kPlanParts);
      for (uint64_t i = 0; i < parts; ++i) order.emplace_back(k * i / parts, k * (i + 1) / parts);
    } else {
      const uint64_t max_slices = std::min<uint64_t>(kPlanSlices, kPlanParts / ranges);
      for (uint64_t sl = 0; sl < max_slices; ++sl) {
        for (uint64_t r = 0; r < ranges; ++r) {
          const uint64_t len = range[r + 1] - range[r];
          const uint64_t slices = parts_of(len, max_slices);
          if (sl >= slices) continue;
          order.emplace_back(range[r] + len * sl / slices, range[r] + len * (sl + 1) / slices);
        }
      }
    }
    // Blocking: the planner threads sleep in WaitPlan (an event without the
    // flag is waited for by spinning, whatever the device's flags).
    const cudaError_t made =
        GrowEvents(&plan_events_, order.size(), cudaEventBlockingSync | cudaEventDisableTiming);
    if (made != cudaSuccess) return made;
    for (const auto& [begin, end] : order) {
      if (begin == end) continue;
      const size_t event = plan_parts_.size();
      plan_pending_ = true;
      cudaError_t e =
          cudaMemcpyAsync(host + begin * sizeof(PlanEntry), d_plan + begin,
                          (end - begin) * sizeof(PlanEntry), cudaMemcpyDeviceToHost, copy_stream_);
      if (e == cudaSuccess) e = cudaEventRecord(plan_events_[event], copy_stream_);
      if (e != cudaSuccess) return e;
      plan_parts_.push_back(PlanPart{begin, end, event});
    }
    std::sort(plan_parts_.begin(), plan_parts_.end(),
              [](const PlanPart& a, const PlanPart& b) { return a.begin < b.begin; });
    return cudaSuccess;
  }

  Status WaitPlan(uint64_t k, uint64_t* ready) override {
    if (k >= plan_count_) return Status::InvalidArgument("gpu: plan: position past the plan");
    // The part holding k: the last one beginning at or before it (the parts
    // cover [0, plan_count_) without gaps).
    auto it = std::upper_bound(plan_parts_.begin(), plan_parts_.end(), k,
                               [](uint64_t pos, const PlanPart& p) { return pos < p.begin; });
    if (it == plan_parts_.begin()) return Status::Aborted("gpu: plan: no part holds the position");
    --it;
    const cudaError_t e = cudaEventSynchronize(plan_events_[it->event]);
    if (e != cudaSuccess) return CudaFailure("plan", e);
    *ready = it->end;
    return Status::OK();
  }

  // The verify stream (RunStages), made on first use.
  cudaError_t EnsureVerifyStream() {
    if (verify_stream_ != nullptr) return cudaSuccess;
    return cudaStreamCreateWithFlags(&verify_stream_, cudaStreamNonBlocking);
  }

  // The copy stream and the events that order its copies after kernels on
  // stream_ (the decoded keys': keys_event_; the encode's: kEncodeParts for
  // the parts, one for the filters), made on first use.
  cudaError_t EnsureCopyStream() {
    if (copy_stream_ != nullptr) return cudaSuccess;
    if (keys_event_ == nullptr) {
      const cudaError_t err = cudaEventCreateWithFlags(&keys_event_, cudaEventDisableTiming);
      if (err != cudaSuccess) return err;
    }
    for (cudaEvent_t& e : encode_events_) {
      if (e != nullptr) continue;
      const cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
      if (err != cudaSuccess) return err;
    }
    return cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking);
  }

  // The huge blocks of a part (list, grid of tbs thread blocks; block
  // indices into part_blocks) on stream_: their bytes, then their checksums
  // once every byte is written, then the checksums stored.
  cudaError_t EncodeHugeBlocks(const std::vector<HugeBlock>& huge, uint64_t tbs,
                               const EncodeSources& src, const EncodeBlock* part_blocks,
                               JobAllocations* mem) {
    HugeBlock* d_huge = nullptr;
    uint32_t* d_acc = nullptr;
    const auto n = static_cast<uint32_t>(huge.size());
    cudaError_t e = mem->Alloc(&d_huge, n);
    if (e == cudaSuccess) e = mem->Alloc(&d_acc, n);
    if (e == cudaSuccess) {
      e = cudaMemcpyAsync(d_huge, huge.data(), n * sizeof(HugeBlock), cudaMemcpyHostToDevice,
                          stream_);
    }
    if (e == cudaSuccess) e = cudaMemsetAsync(d_acc, 0, n * sizeof(uint32_t), stream_);
    if (e != cudaSuccess) return e;
    const auto grid = static_cast<unsigned int>(tbs);
    EncodeHugeBlocksKernel<<<grid, kThreads, 0, stream_>>>(src, part_blocks, d_huge, n, dev_.out);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    HugeBlocksCrcKernel<<<grid, kThreads, 0, stream_>>>(crc_tables_, part_blocks, d_huge, n,
                                                        dev_.out, d_acc);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    StoreHugeBlocksCrcKernel<<<Grid(n), kThreads, 0, stream_>>>(part_blocks, d_huge, n, d_acc,
                                                                dev_.out);
    return cudaGetLastError();
  }

  // Copies dev_.out's spans (offset, size) back into out on copy_stream_
  // once what stream_ has queued so far ran (event k); spans that follow one
  // another in the list and in memory go in one copy.
  cudaError_t CopyBackAfterKernels(const std::vector<std::pair<uint64_t, uint64_t>>& spans,
                                   uint64_t k, uint8_t* out) {
    cudaError_t e = cudaEventRecord(encode_events_[k], stream_);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(copy_stream_, encode_events_[k], 0);
    for (size_t i = 0; i < spans.size() && e == cudaSuccess;) {
      const uint64_t begin = spans[i].first;
      uint64_t end = begin + spans[i].second;
      for (++i; i < spans.size() && spans[i].first == end; ++i) end += spans[i].second;
      e = cudaMemcpyAsync(out + begin, dev_.out + begin, end - begin, cudaMemcpyDeviceToHost,
                          copy_stream_);
    }
    return e;
  }

  const cudaStream_t stream_;
  const uint64_t budget_;
  const std::string name_;
  Crc32cTables* const crc_tables_;  // device memory, owned
  Mailbox* const mailbox_;          // pinned, mapped, owned
  Mailbox* const d_mailbox_;        // the device's pointer to it
  const unsigned int max_blocks_;
  cudaEvent_t events_[5] = {};
  PinnedBuffer arena_;      // the file arena (HostArena)
  PinnedBuffer key_arena_;  // HostKeyArena
  PinnedBuffer out_;        // HostOutput
  PinnedBuffer plan_;       // Run's plan inputs (KeySortOutput::plan)
  Resident dev_;            // AllocInput
  HeldInput held_;          // the arenas Run kept for EncodeBlocks
  HeldInput decoded_;       // the arenas DecodeKeys left for Run
  // BeginStaging .. DecodeKeys or CancelStaging: the ranges copied into
  // dev_.arena from staged_arena_, each between a pair of stage_events_.
  StagedArena staged_;
  const uint8_t* staged_arena_ = nullptr;
  std::vector<cudaEvent_t> stage_events_;
  cudaStream_t copy_stream_ = nullptr;    // EncodeStages' and DecodeStages' copies back
  cudaStream_t verify_stream_ = nullptr;  // RunStages' VerifyKernel, beside the sort
  cudaEvent_t encode_events_[kEncodeParts + 1] = {};
  cudaEvent_t keys_event_ = nullptr;  // DecodeStages: the keys' copies after the kernel
  bool keys_pending_ = false;         // those copies may still run (DrainCopiesBack)
  // PlanStage's copies of the plan back, in parts (QueuePlanCopies), each
  // followed by its event: what WaitPlan waits for.
  struct PlanPart {
    uint64_t begin;
    uint64_t end;
    size_t event;  // index into plan_events_
  };
  std::vector<PlanPart> plan_parts_;  // by begin, covering [0, plan_count_)
  std::vector<cudaEvent_t> plan_events_;
  uint64_t plan_count_ = 0;    // the last Run's plan entries (0: none to wait for)
  bool plan_pending_ = false;  // plan parts may still be copied (DrainCopiesBack)
  PinnedBuffer plan_starts_;   // BoundaryStartsKernel's results
};

// HostVector's pinned storage (host_vector.h).
void* PinnedAllocate(size_t bytes) {
  void* p = nullptr;
  if (PinnedMap(bytes, &p) != cudaSuccess) {
    cudaGetLastError();  // not sticky: HostVector falls back to ordinary memory
    return nullptr;
  }
  return p;
}
void PinnedFree(void* p, size_t bytes) { PinnedUnmap(p, bytes); }

std::string NoGpu(const char* what, cudaError_t e) {
  return std::string("no GPU: ") + what + ": " + cudaGetErrorString(e);
}

}  // namespace

std::unique_ptr<KeySortDevice> NewCudaKeySortDevice(const GpuExecutorOptions& options,
                                                    std::string* reason) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    *reason = NoGpu("cudaGetDeviceCount", e);
    cudaGetLastError();
    return nullptr;
  }
  if (count == 0) {
    *reason = "no GPU: no CUDA device present";
    return nullptr;
  }
  if ((e = cudaSetDevice(0)) != cudaSuccess) {
    *reason = NoGpu("cudaSetDevice", e);
    return nullptr;
  }
  // Block instead of spinning while waiting for the GPU: the CPU is what we
  // are saving; map pinned host memory (the mailbox). Fails harmlessly when
  // the context already exists (64-bit UVA maps pinned memory anyway).
  cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync | cudaDeviceMapHost);
  cudaGetLastError();
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  if ((e = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess) {
    *reason = NoGpu("cudaMemGetInfo", e);
    return nullptr;
  }
  cudaMemPool_t pool;
  if ((e = cudaDeviceGetDefaultMemPool(&pool, 0)) != cudaSuccess) {
    *reason = NoGpu("cudaDeviceGetDefaultMemPool", e);
    return nullptr;
  }
  uint64_t keep = std::numeric_limits<uint64_t>::max();
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  cudaStream_t stream;
  if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
    *reason = NoGpu("cudaStreamCreate", e);
    return nullptr;
  }
  cudaDeviceProp prop;
  std::string name = "cuda";
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) name = std::string("cuda:") + prop.name;
  uint64_t budget =
      static_cast<uint64_t>(static_cast<double>(free_bytes) * options.device_memory_fraction);
  if (options.device_memory_limit != 0) budget = std::min(budget, options.device_memory_limit);
  // The CRC32C tables, made once on the host and kept on the device.
  Crc32cTables host_tables;
  InitCrc32cTables(&host_tables);
  Crc32cTables* crc_tables = nullptr;
  if ((e = cudaMalloc(&crc_tables, sizeof(Crc32cTables))) != cudaSuccess ||
      (e = cudaMemcpy(crc_tables, &host_tables, sizeof(Crc32cTables), cudaMemcpyHostToDevice)) !=
          cudaSuccess) {
    *reason = NoGpu("CRC32C tables", e);
    if (crc_tables != nullptr) cudaFree(crc_tables);
    cudaStreamDestroy(stream);
    return nullptr;
  }
  // The mailbox (see Mailbox), made here so that no job can fail for it.
  void* mailbox = nullptr;
  void* d_mailbox = nullptr;
  if ((e = cudaHostAlloc(&mailbox, sizeof(Mailbox), cudaHostAllocMapped)) != cudaSuccess ||
      (e = cudaHostGetDevicePointer(&d_mailbox, mailbox, 0)) != cudaSuccess) {
    *reason = NoGpu("mailbox", e);
    if (mailbox != nullptr) cudaFreeHost(mailbox);
    cudaFree(crc_tables);
    cudaStreamDestroy(stream);
    return nullptr;
  }
  int sms = 0;
  int per_sm = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, EncodeBlocksKernel, kThreads, 0);
  const unsigned int max_blocks = static_cast<unsigned int>(std::max(1, sms) * std::max(1, per_sm));
  cudaGetLastError();
  SetPinnedHostMemory(PinnedHostMemory{&PinnedAllocate, &PinnedFree});
  return std::make_unique<CudaKeySortDevice>(stream, budget, name, crc_tables,
                                             static_cast<Mailbox*>(mailbox),
                                             static_cast<Mailbox*>(d_mailbox), max_blocks);
}

}  // namespace gpu
}  // namespace accelkv
