#include "util/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace accelkv::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // reflected 0x1EDC6F41

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = MakeTable();

uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint32_t c = crc ^ 0xffffffffu;
  for (size_t i = 0; i < n; i++) c = kTable[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

#if defined(__x86_64__)
// The crc32 instruction has a latency of 3 cycles and a throughput of 1 per
// cycle, so one dependent chain runs at a third of the possible speed. Long
// inputs are cut into three equal stripes, CRCed in three independent chains
// and combined (the method of Mark Adler's crc32c.c): the raw CRC register is
// linear, so crc(A ++ B) = Shift_|B|(crc(A)) ^ crc_from_zero(B), where
// Shift_n multiplies by x^(8n) mod P (the register after n zero bytes), done
// with four 256-entry tables per stripe length.

// A 32x32 matrix over GF(2), one column per bit: the register's linear map.
using Gf2Matrix = std::array<uint32_t, 32>;

constexpr uint32_t Gf2Times(const Gf2Matrix& m, uint32_t v) {
  uint32_t sum = 0;
  for (int i = 0; v != 0; ++i, v >>= 1) {
    if (v & 1) sum ^= m[i];
  }
  return sum;
}

constexpr Gf2Matrix Gf2Square(const Gf2Matrix& m) {
  Gf2Matrix sq{};
  for (int i = 0; i < 32; ++i) sq[i] = Gf2Times(m, m[i]);
  return sq;
}

// Tables of Shift_len: byte k of the register indexes table k.
using ShiftTables = std::array<std::array<uint32_t, 256>, 4>;

constexpr ShiftTables MakeShiftTables(size_t len) {
  Gf2Matrix op{};  // one zero bit
  op[0] = kPoly;
  for (int i = 1; i < 32; ++i) op[i] = uint32_t{1} << (i - 1);
  op = Gf2Square(Gf2Square(Gf2Square(op)));  // one zero byte
  Gf2Matrix result{};                        // identity
  for (int i = 0; i < 32; ++i) result[i] = uint32_t{1} << i;
  for (; len != 0; len >>= 1, op = Gf2Square(op)) {  // op^len by squaring
    if (len & 1) {
      Gf2Matrix next{};
      for (int i = 0; i < 32; ++i) next[i] = Gf2Times(op, result[i]);
      result = next;
    }
  }
  ShiftTables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 0; k < 4; ++k) t[k][b] = Gf2Times(result, b << (8 * k));
  }
  return t;
}

constexpr size_t kLongStripe = 4096;
constexpr size_t kShortStripe = 256;
constexpr ShiftTables kShiftLong = MakeShiftTables(kLongStripe);
constexpr ShiftTables kShiftShort = MakeShiftTables(kShortStripe);

inline uint64_t Shift(const ShiftTables& t, uint64_t crc) {
  return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^
         t[3][(crc >> 24) & 0xff];
}

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Consumes as many runs of 3 * stripe bytes as *n allows, in three chains.
template <size_t kStripe>
__attribute__((target("sse4.2"))) inline uint64_t ThreeWay(uint64_t c0, const ShiftTables& shift,
                                                           const char** p, size_t* n) {
  static_assert(kStripe % 8 == 0);
  while (*n >= 3 * kStripe) {
    const char* a = *p;
    uint64_t c1 = 0;
    uint64_t c2 = 0;
    for (size_t i = 0; i < kStripe; i += 8) {
      c0 = _mm_crc32_u64(c0, Load64(a + i));
      c1 = _mm_crc32_u64(c1, Load64(a + kStripe + i));
      c2 = _mm_crc32_u64(c2, Load64(a + 2 * kStripe + i));
    }
    c0 = Shift(shift, c0) ^ c1;
    c0 = Shift(shift, c0) ^ c2;
    *p += 3 * kStripe;
    *n -= 3 * kStripe;
  }
  return c0;
}

__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t crc, const char* data, size_t n) {
  const char* p = data;
  uint64_t c = crc ^ 0xffffffffu;
  c = ThreeWay<kLongStripe>(c, kShiftLong, &p, &n);
  c = ThreeWay<kShortStripe>(c, kShiftShort, &p, &n);
  while (n >= 8) {
    c = _mm_crc32_u64(c, Load64(p));
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<uint32_t>(c);
  while (n > 0) {
    c32 = _mm_crc32_u8(c32, static_cast<unsigned char>(*p));
    p++;
    n--;
  }
  return c32 ^ 0xffffffffu;
}

bool HasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
#if defined(__x86_64__)
  if (HasSse42()) return ExtendSse42(init_crc, data, n);
#endif
  return ExtendPortable(init_crc, data, n);
}

}  // namespace accelkv::crc32c
