// Cooperative CRC32C: the lanes of a group (a warp on the device) each
// checksum one contiguous chunk of a buffer, and the partial CRCs combine
// into the CRC of the whole, bit for bit ~Crc32cUpdate(table, ~0, p, n)
// (key_sort_common.h). A warp per block replaces a thread per block in
// the verify and finish kernels.
//
// Math (zlib's crc32_combine; Mark Adler's crc32c.c): the raw CRC register
// (pre-inverted, no final xor) is linear over GF(2), so for buffers A, B
//   R(r, A ++ B) = Shift_|B|(R(r, A)) ^ R(0, B),
// where Shift_m(r) = R(r, m zero bytes) = r * x^(8m) mod P, a product of
// polynomials mod the (reflected) Castagnoli polynomial P; bit 31 of a
// register is the coefficient of x^0. Lane k's chunk ends s_k bytes
// before the end of the buffer, so the register over the buffer is
//   XOR over k of Shift_{s_k}(R(k == 0 ? ~0 : 0, chunk_k)),
// which a warp reduces with one XOR reduction (any order: XOR commutes).
// x^(8s) is a product of up to three table entries, one per byte of s
// (s < 16 MiB; longer shifts square and multiply), so a lane's combine
// step costs one or two multiplications mod P (32 shift-and-xor steps).
//
// Within a lane: interior chunk boundaries are 16-byte aligned addresses;
// whole 16-byte units are read with one aligned load each (uint4 on the
// device) and CRCed slicing-by-8 (two steps); lane 0's unaligned head and
// the last lane's tail (< 16 bytes each) go by aligned words (slicing-by-4)
// and bytes. No lane reads outside [p, p + n), so a warp may checksum
// bytes next to ones another warp writes.
//
// Device use: the tables (11 KiB) are made once (InitCrc32cTables), kept in
// device memory and copied into each thread block's shared memory
// (LoadCrc32cTables). Host use: the same functions with a loop over the
// lanes (CooperativeCrc32c), the tested reference.
// All functions are pure.
#pragma once

#include <cstdint>

#include "gpu/key_sort_common.h"

namespace accelkv {
namespace gpu {

inline constexpr uint32_t kWarpLanes = 32;
inline constexpr uint32_t kCrcOne = 0x80000000u;  // the polynomial 1 (x^0)

struct Crc32cTables {
  // slice[k][i]: raw register after byte i then k zero bytes, from 0
  // (slice[0][i] == Crc32cTableEntry(i)).
  uint32_t slice[8][256];
  // shift[j][v] = x^(8 * v * 256^j) mod P: the map Shift_{v * 256^j}.
  uint32_t shift[3][256];
};

// a * b mod P (Adler's multmodp).
ACCELKV_HD inline uint32_t Crc32cMulModP(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (; a != 0; a <<= 1) {
    if (a & 0x80000000u) p ^= b;
    b = (b >> 1) ^ (kCrc32cPoly & (0u - (b & 1u)));
  }
  return p;
}

// x^(8 * m) mod P for m a multiple of 2^first_bit, by square and multiply.
ACCELKV_HD inline uint32_t Crc32cX8nModP(uint64_t m, int first_bit = 0) {
  uint32_t sq = kCrcOne >> 8;  // x^8
  for (int b = 0; b < first_bit; ++b) sq = Crc32cMulModP(sq, sq);
  uint32_t p = kCrcOne;
  for (m >>= first_bit; m != 0; m >>= 1) {
    if (m & 1) p = Crc32cMulModP(p, sq);
    sq = Crc32cMulModP(sq, sq);
  }
  return p;
}

// Fills column i (0 <= i < 256) of every table: up to 48 multiplications
// mod P, a few thousand instructions, so a kernel should rather copy tables
// made once (LoadCrc32cTables); in a kernel that fills its own:
//   for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) FillCrc32cTables(&t, i);
//   __syncthreads();
ACCELKV_HD inline void FillCrc32cTables(Crc32cTables* t, uint32_t i) {
  uint32_t c = Crc32cTableEntry(i);
  t->slice[0][i] = c;
  for (int k = 1; k < 8; ++k) {
    c = (c >> 8) ^ Crc32cTableEntry(c & 0xffu);
    t->slice[k][i] = c;
  }
  uint32_t sq = kCrcOne >> 8;  // x^(8 * 2^b) for b = 0, 1, ...
  for (int j = 0; j < 3; ++j) {
    uint32_t p = kCrcOne;
    for (int b = 0; b < 8; ++b) {
      if ((i >> b) & 1u) p = Crc32cMulModP(p, sq);
      sq = Crc32cMulModP(sq, sq);
    }
    t->shift[j][i] = p;
  }
}

ACCELKV_HD inline void InitCrc32cTables(Crc32cTables* t) {
  for (uint32_t i = 0; i < 256; ++i) FillCrc32cTables(t, i);
}

// Thread `thread` of `threads` copies its share of src (e.g. tables made by
// InitCrc32cTables, in device memory) to dst (e.g. in shared memory);
// __syncthreads() before use.
ACCELKV_HD inline void LoadCrc32cTables(Crc32cTables* dst, const Crc32cTables* src, uint32_t thread,
                                        uint32_t threads) {
  for (uint32_t k = thread; k < 11 * 256; k += threads) {
    const uint32_t row = k >> 8;
    const uint32_t col = k & 0xffu;
    if (row < 8) {
      dst->slice[row][col] = src->slice[row][col];
    } else {
      dst->shift[row - 8][col] = src->shift[row - 8][col];
    }
  }
}

// Shift_m(reg): the raw register after m more zero bytes.
ACCELKV_HD inline uint32_t Crc32cShift(const Crc32cTables& t, uint32_t reg, uint64_t m) {
  if (reg == 0 || m == 0) return reg;
  uint32_t x = t.shift[0][m & 0xffu];
  if ((m >> 8) & 0xffu) x = Crc32cMulModP(x, t.shift[1][(m >> 8) & 0xffu]);
  if ((m >> 16) & 0xffu) x = Crc32cMulModP(x, t.shift[2][(m >> 16) & 0xffu]);
  if (m >> 24) x = Crc32cMulModP(x, Crc32cX8nModP(m >> 24 << 24, 24));
  return Crc32cMulModP(reg, x);
}

// The raw register over A ++ B from reg_a = R(r, A) and reg_b = R(0, B)
// (crc32c_combine on raw registers).
ACCELKV_HD inline uint32_t Crc32cCombine(const Crc32cTables& t, uint32_t reg_a, uint32_t reg_b,
                                         uint64_t len_b) {
  return Crc32cShift(t, reg_a, len_b) ^ reg_b;
}

// Lane `lane`'s chunk [begin, end) of p[0, n): the 16-byte units from the
// first 16-byte aligned address split evenly (the first lanes take one
// more), lane 0 also takes the head before them, the last lane the tail.
// The chunks of lanes 0..lanes-1 tile [0, n) in order.
struct CrcChunk {
  uint64_t begin;
  uint64_t end;
};

ACCELKV_HD inline CrcChunk CrcLaneChunk(const uint8_t* p, uint64_t n, uint32_t lane,
                                        uint32_t lanes) {
  uint64_t head = (16u - (reinterpret_cast<uintptr_t>(p) & 15u)) & 15u;
  if (head > n) head = n;
  const uint64_t units = (n - head) / 16;
  const uint64_t per = units / lanes;
  const uint64_t extra = units % lanes;
  const uint64_t first = lane * per + (lane < extra ? lane : extra);
  const uint64_t count = per + (lane < extra ? 1 : 0);
  return CrcChunk{lane == 0 ? 0 : head + 16 * first,
                  lane + 1 == lanes ? n : head + 16 * (first + count)};
}

// Slicing steps over little-endian words (w the first four bytes).
ACCELKV_HD inline uint32_t Crc32cStep4(const Crc32cTables& t, uint32_t reg, uint32_t w) {
  w ^= reg;
  return t.slice[3][w & 0xffu] ^ t.slice[2][(w >> 8) & 0xffu] ^ t.slice[1][(w >> 16) & 0xffu] ^
         t.slice[0][w >> 24];
}

ACCELKV_HD inline uint32_t Crc32cStep8(const Crc32cTables& t, uint32_t reg, uint32_t lo,
                                       uint32_t hi) {
  lo ^= reg;
  return t.slice[7][lo & 0xffu] ^ t.slice[6][(lo >> 8) & 0xffu] ^ t.slice[5][(lo >> 16) & 0xffu] ^
         t.slice[4][lo >> 24] ^ t.slice[3][hi & 0xffu] ^ t.slice[2][(hi >> 8) & 0xffu] ^
         t.slice[1][(hi >> 16) & 0xffu] ^ t.slice[0][hi >> 24];
}

ACCELKV_HD inline uint32_t Crc32cStep16(const Crc32cTables& t, uint32_t reg, const uint8_t* q) {
#if defined(__CUDA_ARCH__)
  const uint4 w = *reinterpret_cast<const uint4*>(q);
  return Crc32cStep8(t, Crc32cStep8(t, reg, w.x, w.y), w.z, w.w);
#else
  reg = Crc32cStep8(t, reg, LoadFixed32(q), LoadFixed32(q + 4));
  return Crc32cStep8(t, reg, LoadFixed32(q + 8), LoadFixed32(q + 12));
#endif
}

// Extends a raw register over q[0, m): bytes to a 4-byte aligned address,
// words to a 16-byte aligned one, aligned 16-byte units (32 bytes, a
// sector, per iteration), then words and bytes.
ACCELKV_HD inline uint32_t Crc32cUpdateSliced(const Crc32cTables& t, uint32_t reg, const uint8_t* q,
                                              uint64_t m) {
  const uint8_t* end = q + m;
  while (q != end && (reinterpret_cast<uintptr_t>(q) & 3u) != 0) {
    reg = t.slice[0][(reg ^ *q++) & 0xffu] ^ (reg >> 8);
  }
  for (; end - q >= 4 && (reinterpret_cast<uintptr_t>(q) & 15u) != 0; q += 4) {
    reg = Crc32cStep4(t, reg, LoadWord(q));
  }
  for (; end - q >= 32; q += 32) reg = Crc32cStep16(t, Crc32cStep16(t, reg, q), q + 16);
  if (end - q >= 16) {
    reg = Crc32cStep16(t, reg, q);
    q += 16;
  }
  for (; end - q >= 4; q += 4) reg = Crc32cStep4(t, reg, LoadWord(q));
  while (q != end) reg = t.slice[0][(reg ^ *q++) & 0xffu] ^ (reg >> 8);
  return reg;
}

// Lane `lane`'s partial CRC: the raw register over its chunk, from ~0 for
// lane 0 and from 0 for the others.
ACCELKV_HD inline uint32_t CrcPart(const Crc32cTables& t, const uint8_t* p, uint64_t n,
                                   uint32_t lane, uint32_t lanes) {
  const CrcChunk c = CrcLaneChunk(p, n, lane, lanes);
  return Crc32cUpdateSliced(t, lane == 0 ? 0xffffffffu : 0u, p + c.begin, c.end - c.begin);
}

// Lane `lane`'s partial CRC shifted to the end of the buffer: the XOR over
// all lanes is the raw register over p[0, n).
ACCELKV_HD inline uint32_t CrcPartShifted(const Crc32cTables& t, const uint8_t* p, uint64_t n,
                                          uint32_t lane, uint32_t lanes) {
  return Crc32cShift(t, CrcPart(t, p, n, lane, lanes), n - CrcLaneChunk(p, n, lane, lanes).end);
}

// CRC32C of p[0, n) by `lanes` lanes, one after another (host emulation).
ACCELKV_HD inline uint32_t CooperativeCrc32c(const Crc32cTables& t, const uint8_t* p, uint64_t n,
                                             uint32_t lanes) {
  uint32_t reg = 0;
  for (uint32_t lane = 0; lane < lanes; ++lane) reg ^= CrcPartShifted(t, p, n, lane, lanes);
  return ~reg;
}

#if defined(__CUDACC__)
// The XOR of v over the warp's 32 lanes, in every lane. REQUIRES: all 32
// lanes call it together.
__device__ inline uint32_t WarpXor(uint32_t v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_xor_sync(0xffffffffu, v);
#else
  for (int d = 16; d > 0; d >>= 1) v ^= __shfl_xor_sync(0xffffffffu, v, d);
  return v;
#endif
}
#endif

// CRC32C of p[0, n), in every lane. Device: REQUIRES all 32 lanes of the
// warp call it together with the same arguments. Host: lane is ignored and
// the 32 lanes run in a loop.
ACCELKV_HD inline uint32_t WarpCrc32c(const Crc32cTables& t, const uint8_t* p, uint64_t n,
                                      uint32_t lane) {
#if defined(__CUDA_ARCH__)
  return ~WarpXor(CrcPartShifted(t, p, n, lane, kWarpLanes));
#else
  (void)lane;
  return CooperativeCrc32c(t, p, n, kWarpLanes);
#endif
}

// BlockChecksumOk (key_sort_common.h) by a warp; the result in every lane.
ACCELKV_HD inline bool WarpBlockChecksumOk(const Crc32cTables& t, const uint8_t* arena,
                                           const BlockSpan& span, uint32_t lane) {
  const uint8_t* p = arena + span.offset;
  return StoredCrcMatches(p, span.size, WarpCrc32c(t, p, span.size + 1, lane));
}

// A block trailer's CRC by a warp (the host's: WriteTrailerCrcOnHost,
// host_encoder.h): the masked CRC32C of out[offset, offset + size + 1)
// (contents ++ type byte), stored by lane 0
// at out + offset + size + 1. REQUIRES: those bytes are written and
// visible to every lane (__syncwarp() after lane 0 writes a footer).
ACCELKV_HD inline void WarpWriteBlockCrc(const Crc32cTables& t, uint8_t* out, uint64_t offset,
                                         uint64_t size, uint32_t lane) {
  const uint32_t crc = WarpCrc32c(t, out + offset, size + 1, lane);
  if (lane == 0) StoreMaskedCrc(out + offset + size + 1, crc);
}

}  // namespace gpu
}  // namespace accelkv
