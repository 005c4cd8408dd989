// Rounding of sizes, offsets and addresses to an alignment (any a > 0; the
// direct I/O code uses kDirectIoAlignment, accelkv/env.h).
#pragma once

#include <cstdint>

namespace accelkv {

inline constexpr uint64_t AlignDown(uint64_t v, uint64_t a) { return v / a * a; }
inline constexpr uint64_t AlignUp(uint64_t v, uint64_t a) { return AlignDown(v + a - 1, a); }
inline constexpr bool IsAligned(uint64_t v, uint64_t a) { return v % a == 0; }

}  // namespace accelkv
