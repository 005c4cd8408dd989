#include "util/arena.h"

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

class ArenaTest : public testing::TestWithParam<bool /*huge_blocks*/> {};

// Random sizes, small and larger than a quarter block (their own blocks),
// aligned and not: every allocation keeps its bytes, aligned ones are
// aligned, and the usage counts at least every byte handed out.
TEST_P(ArenaTest, AllocationsKeepTheirBytes) {
  const bool huge = GetParam();
  const size_t block = huge ? Arena::kHugeBlockSize : Arena::kDefaultBlockSize;
  Arena arena(huge);
  EXPECT_EQ(0u, arena.MemoryUsage());
  Random rnd(test::TestSeed());
  std::vector<std::pair<char*, size_t>> allocated;
  size_t bytes = 0;
  for (int i = 0; i < 20000; i++) {
    size_t n = 1 + rnd.Uniform(i % 100 == 0 ? block : 200);
    if (i == 10) n = block + 1;  // larger than a block
    char* p = rnd.OneIn(2) ? arena.AllocateAligned(n) : arena.Allocate(n);
    ASSERT_NE(nullptr, p);
    std::memset(p, i & 0xff, n);
    allocated.emplace_back(p, n);
    bytes += n;
    ASSERT_GE(arena.MemoryUsage(), bytes);
  }
  for (size_t i = 0; i < allocated.size(); i++) {
    const auto [p, n] = allocated[i];
    for (size_t j = 0; j < n; j += 1 + n / 8) ASSERT_EQ(static_cast<char>(i & 0xff), p[j]) << i;
    ASSERT_EQ(static_cast<char>(i & 0xff), p[n - 1]) << i;
  }
  char* aligned = arena.AllocateAligned(24);
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(aligned) % 8);
}

// A huge arena's first block is one 2 MiB block on a 2 MiB boundary, so the
// kernel can back it with one huge page; a default arena's is 4 KiB.
TEST_P(ArenaTest, BlockSizeAndAlignment) {
  const bool huge = GetParam();
  Arena arena(huge);
  char* first = arena.Allocate(100);
  ASSERT_NE(nullptr, first);
  if (huge) {
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(first) % Arena::kHugeBlockSize);
    EXPECT_GE(arena.MemoryUsage(), Arena::kHugeBlockSize);
    EXPECT_LT(arena.MemoryUsage(), Arena::kHugeBlockSize + 4096);
  } else {
    EXPECT_GE(arena.MemoryUsage(), Arena::kDefaultBlockSize);
    EXPECT_LT(arena.MemoryUsage(), Arena::kDefaultBlockSize + 4096);
  }
  // Filling the rest of the block adds no block; one byte more adds one.
  const size_t before = arena.MemoryUsage();
  const size_t block = huge ? Arena::kHugeBlockSize : Arena::kDefaultBlockSize;
  for (size_t left = block - 100; left > 0;) {
    const size_t n = left < 50 ? left : 50;
    arena.Allocate(n);
    left -= n;
  }
  EXPECT_EQ(before, arena.MemoryUsage());
  arena.Allocate(1);
  EXPECT_GT(arena.MemoryUsage(), before + block - 1);
}

// While a huge arena lives (an open DB's memtable), a dead arena's huge
// block serves the next arena (no fresh mapping for the kernel to zero); its
// bytes are whatever they were. Once no huge arena lives, none is kept.
TEST(ArenaHugeBlockTest, BlocksOfDeadArenasAreReusedWhileAnyLives) {
  ASSERT_EQ(0u, Arena::CachedHugeBlocks());
  {
    Arena keeper(true);
    keeper.Allocate(1);
    char* first_block = nullptr;
    char* second_block = nullptr;
    {
      Arena arena(true);
      first_block = arena.Allocate(64);
      std::memset(first_block, 'x', 64);
      // Seven eighths of a block fit behind those 64 bytes; the eighth
      // starts a second block.
      for (int i = 0; i < 7; i++) arena.Allocate(Arena::kHugeBlockSize / 8);
      second_block = arena.Allocate(Arena::kHugeBlockSize / 8);
    }
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(second_block) % Arena::kHugeBlockSize);
    EXPECT_EQ(2u, Arena::CachedHugeBlocks());
    Arena arena(true);
    char* again = arena.Allocate(64);
    EXPECT_EQ(1u, Arena::CachedHugeBlocks());
    EXPECT_EQ(second_block, again);  // the last block given back
    std::memset(again, 'y', 64);
    EXPECT_EQ('y', again[63]);
  }
  EXPECT_EQ(0u, Arena::CachedHugeBlocks());
  {
    Arena arena(true);
    arena.Allocate(64);
  }
  EXPECT_EQ(0u, Arena::CachedHugeBlocks());
}

INSTANTIATE_TEST_SUITE_P(Blocks, ArenaTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Huge" : "Default";
                         });

}  // namespace
}  // namespace accelkv
