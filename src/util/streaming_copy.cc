#include "util/streaming_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace accelkv {

void StreamingCopy(char* dst, const char* src, size_t n) {
#if defined(__SSE2__)
  // The head up to the destination's 16-byte boundary and the tail under
  // 64 bytes by memcpy; the rest in 64-byte (one cache line's) groups of
  // aligned streaming stores.
  const size_t head = std::min(n, (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  size_t k = head;
  for (; n - k >= 64; k += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k + 48), d);
  }
  std::memcpy(dst + k, src + k, n - k);
  _mm_sfence();  // streaming stores are weakly ordered
#else
  std::memcpy(dst, src, n);
#endif
}

}  // namespace accelkv
