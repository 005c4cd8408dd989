#include "util/streaming_copy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace accelkv {
namespace {

// Every destination and source alignment within a cache line, sizes around
// the 16- and 64-byte steps and a large one: the destination holds exactly
// the source's bytes, and the bytes around it are untouched.
TEST(StreamingCopy, EqualsMemcpyAtEveryAlignmentAndSize) {
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 200; n++) sizes.push_back(n);
  for (size_t n : {size_t{4095}, size_t{4096}, size_t{65536 + 13}, kStreamingCopyMinBytes + 7}) {
    sizes.push_back(n);
  }
  std::string src(kStreamingCopyMinBytes + 200, '\0');
  for (size_t i = 0; i < src.size(); i++) src[i] = static_cast<char>(i * 131 + (i >> 8));
  for (size_t n : sizes) {
    for (size_t dst_at = 0; dst_at < 64; dst_at += (n > 4096 ? 7 : 1)) {
      for (size_t src_at = 0; src_at < 64; src_at += (n > 4096 ? 9 : 5)) {
        // The string's data is at least 16-byte aligned, so 64 + dst_at
        // covers every alignment of the destination in a cache line.
        std::string dst(n + 128, '\x5a');
        const size_t at = 64 + dst_at;
        StreamingCopy(dst.data() + at, src.data() + src_at, n);
        ASSERT_EQ(0, std::memcmp(dst.data() + at, src.data() + src_at, n))
            << "n " << n << " dst_at " << dst_at << " src_at " << src_at;
        for (size_t i = 0; i < at; i++) ASSERT_EQ('\x5a', dst[i]) << "before, n " << n;
        for (size_t i = at + n; i < dst.size(); i++) ASSERT_EQ('\x5a', dst[i]) << "after, n " << n;
      }
    }
  }
}

}  // namespace
}  // namespace accelkv
