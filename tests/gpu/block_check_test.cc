// table/block_check.h's CheckBlockLayout on the GPU against the CPU: every
// block layout of the format (fixed and variable key and value widths,
// shared prefixes or none, empty blocks, blocks over 64 KiB with 4-byte end
// offsets), whole and with bytes of their end-offset arrays and footers
// flipped or their contents cut short, gives the same result and the same
// layout on both. Skips where there is no GPU (or no CUDA in the build).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/key_sort_common.h"
#include "table/block_builder.h"
#include "table/block_check.h"
#include "testutil/test_util.h"
#include "util/random.h"

#if defined(ACCELKV_WITH_CUDA)
#include "gpu/block_check_kernel.h"
#endif

namespace accelkv {
namespace {

// A block's contents built by BlockBuilder: n entries, keys ascending with
// a common prefix of prefix bytes, key and value sizes fixed or drawn.
std::string RandomBlock(Random* rnd) {
  BlockBuilder b;
  const int n = static_cast<int>(rnd->Uniform(5) == 0 ? 0 : 1 + rnd->Uniform(200));
  const bool fixed_keys = rnd->OneIn(2);
  const bool fixed_values = rnd->OneIn(2);
  const bool huge = rnd->OneIn(20);  // over 64 KiB: 4-byte end offsets
  const std::string prefix(rnd->Uniform(3) * 4, 'p');
  const uint32_t key_size = 1 + static_cast<uint32_t>(rnd->Uniform(12));
  const uint32_t value_size = static_cast<uint32_t>(rnd->Uniform(huge ? 2000 : 60));
  for (int i = 0; i < n; ++i) {
    char num[16];
    std::snprintf(num, sizeof(num), "%08d", i);
    std::string key = prefix + num;
    if (!fixed_keys) key.append(rnd->Uniform(key_size), 'k');
    const size_t vsize = fixed_values ? value_size : rnd->Uniform(value_size + 1);
    b.Add(key, std::string(vsize, static_cast<char>('a' + i % 26)));
  }
  return b.Finish().ToString();
}

TEST(BlockCheckTest, DeviceAgreesWithTheCpuOnEveryBlock) {
  Random rnd(test::TestSeed());
  std::vector<uint8_t> arena;
  std::vector<gpu::BlockSpan> spans;
  for (int i = 0; i < 3000; ++i) {
    std::string block = RandomBlock(&rnd);
    uint64_t size = block.size();
    switch (rnd.Uniform(4)) {
      case 0: {  // flip a byte of the footer or the end offsets before it
        const uint64_t tail = std::min<uint64_t>(size, 16 + rnd.Uniform(64));
        if (tail > 0)
          block[size - 1 - rnd.Uniform(tail)] ^= static_cast<char>(1 + rnd.Uniform(255));
        break;
      }
      case 1:  // cut short: the footer is read from other bytes
        size = rnd.Uniform(size + 1);
        break;
      default:  // whole
        break;
    }
    spans.push_back(gpu::BlockSpan{arena.size(), size});
    arena.insert(arena.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(size));
  }
  std::vector<BlockCheck> want(spans.size());
  std::vector<BlockLayout> want_layouts(spans.size());
  int ok = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    want[i] = CheckBlockLayout(arena.data() + spans[i].offset, spans[i].size, &want_layouts[i]);
    ok += want[i] == BlockCheck::kOk;
  }
  // Both outcomes are well represented.
  EXPECT_LT(1000, ok);
  EXPECT_GT(static_cast<int>(spans.size()) - 300, ok);
#if defined(ACCELKV_WITH_CUDA)
  std::vector<BlockCheck> got;
  std::vector<BlockLayout> got_layouts;
  std::string reason;
  if (!test::CheckBlocksOnDevice(arena, spans, &got, &got_layouts, &reason)) {
    GTEST_SKIP() << reason;
  }
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    ASSERT_EQ(static_cast<uint32_t>(want[i]), static_cast<uint32_t>(got[i])) << "block " << i;
    const BlockLayout& a = want_layouts[i];
    const BlockLayout& b = got_layouts[i];
    ASSERT_EQ(a.n, b.n) << i;
    ASSERT_EQ(a.prefix_size, b.prefix_size) << i;
    ASSERT_EQ(a.key_width, b.key_width) << i;
    ASSERT_EQ(a.value_width, b.value_width) << i;
    ASSERT_EQ(a.key_bytes, b.key_bytes) << i;
    ASSERT_EQ(a.value_bytes, b.value_bytes) << i;
    ASSERT_EQ(a.offset_width, b.offset_width) << i;
    ASSERT_EQ(a.size, b.size) << i;
  }
#else
  GTEST_SKIP() << "built without CUDA (ACCELKV_WITH_CUDA off): the device's check not tested";
#endif
}

}  // namespace
}  // namespace accelkv
