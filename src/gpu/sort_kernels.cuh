// The sort's and the dedup's kernels (docs/GPU.md, "Pipeline as built"): the sort
// items of the merge path, the radix keys of the fixed-width path (whole or
// packed to the bits that differ), the obsolete-version filter, and which
// path a job takes. Included by cuda_key_sort_device.cu alone (see
// kernel_common.cuh).
#pragma once

#include <cuda/std/tuple>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "gpu/kernel_common.cuh"
#include "gpu/key_sort_device.h"

namespace accelkv {
namespace gpu {
namespace {

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

}  // namespace
}  // namespace gpu
}  // namespace accelkv
