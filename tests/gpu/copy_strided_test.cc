// CopyStrided (gpu/key_sort_common.h), the byte copy of the decode and
// encode kernels: every size around the unit path's threshold, every
// alignment of source and destination, and the lane counts the kernels use
// (a warp, a thread block) run lane by lane on the host, each copying
// exactly the source bytes and nothing beside them, and reading nothing
// past the source's end (ASan in CI).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gpu/key_sort_common.h"

namespace accelkv {
namespace {

TEST(CopyStridedTest, EverySizeAlignmentAndLaneCount) {
  constexpr uint64_t kPad = 32;
  std::vector<uint8_t> src(1024 + 2 * kPad);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
  std::vector<uint64_t> sizes;
  for (uint64_t n = 0; n <= 200; ++n) sizes.push_back(n);
  for (uint64_t n : {255u, 256u, 257u, 511u, 1000u, 1024u}) sizes.push_back(n);
  int runs = 0;
  for (const uint32_t lanes : {1u, 3u, 32u, 256u}) {
    for (const uint64_t n : sizes) {
      for (uint64_t s_off = 0; s_off < 16; ++s_off) {
        for (uint64_t d_off = 0; d_off < 16; d_off += (lanes == 1 ? 1 : 5)) {
          std::vector<uint8_t> dst(1024 + 2 * kPad + 16, 0xee);
          // 16-byte aligned base, then d_off: every destination alignment.
          uint8_t* base = dst.data() + ((16 - reinterpret_cast<uintptr_t>(dst.data()) % 16) % 16);
          uint8_t* d = base + kPad / 2 + d_off;
          // The source ends its own heap block (malloc aligns its start), so
          // a read past src + n is a heap overflow under ASan.
          const std::vector<uint8_t> owned(src.begin(), src.begin() + s_off + n);
          const uint8_t* s = owned.data() + s_off;
          for (uint32_t lane = 0; lane < lanes; ++lane) gpu::CopyStrided(d, s, n, lane, lanes);
          ++runs;
          for (uint64_t k = 0; k < n; ++k) {
            ASSERT_EQ(s[k], d[k]) << "size " << n << " lanes " << lanes << " src+" << s_off
                                  << " dst+" << d_off << " byte " << k;
          }
          for (uint8_t* p = dst.data(); p < d; ++p) ASSERT_EQ(0xee, *p) << "before, size " << n;
          for (uint8_t* p = d + n; p < dst.data() + dst.size(); ++p) {
            ASSERT_EQ(0xee, *p) << "after, size " << n << " lanes " << lanes;
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 10000);
}

}  // namespace
}  // namespace accelkv
