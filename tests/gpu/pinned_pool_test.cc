// PinnedPool (src/gpu/pinned_pool.h) over ordinary memory: which free
// region a Take gets, when a new one is mapped, and what Give keeps.
#include "gpu/pinned_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#if defined(ACCELKV_WITH_CUDA)
#include "gpu/pinned_buffer.h"
#endif

namespace accelkv {
namespace gpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

std::atomic<int> live_maps{0};
std::atomic<bool> fail_maps{false};

void* TestMap(size_t bytes) {
  if (fail_maps.load()) return nullptr;
  live_maps++;
  return std::calloc(bytes == 0 ? 1 : bytes, 1);
}
void TestUnmap(void* p, size_t /*bytes*/) {
  live_maps--;
  std::free(p);
}

class PinnedPoolTest : public testing::Test {
 protected:
  void SetUp() override {
    live_maps = 0;
    fail_maps = false;
  }
  void TearDown() override { EXPECT_EQ(0, live_maps.load()) << "regions left mapped"; }
  PinnedPool::Memory memory_{&TestMap, &TestUnmap};
};

TEST_F(PinnedPoolTest, GivenRegionServesTheNextTake) {
  PinnedPool pool(memory_);
  const PinnedPool::Region a = pool.Take(10 * kMiB, 12 * kMiB);
  ASSERT_NE(nullptr, a.p);
  EXPECT_EQ(12 * kMiB, a.bytes);  // the size wanted
  pool.Give(a);
  EXPECT_EQ(12 * kMiB, pool.GetStats().free_bytes);
  const PinnedPool::Region b = pool.Take(11 * kMiB, 20 * kMiB);
  EXPECT_EQ(a.p, b.p);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(1u, pool.GetStats().maps);
  EXPECT_EQ(12 * kMiB, pool.GetStats().mapped_bytes);  // the second Take mapped nothing
  EXPECT_EQ(0u, pool.GetStats().free_bytes);
  pool.Give(b);
}

TEST_F(PinnedPoolTest, SmallestFittingRegionAndNoLargeRegionForASmallNeed) {
  PinnedPool pool(memory_);
  const PinnedPool::Region big = pool.Take(64 * kMiB, 64 * kMiB);
  const PinnedPool::Region mid = pool.Take(16 * kMiB, 16 * kMiB);
  const PinnedPool::Region small = pool.Take(1 * kMiB, 1 * kMiB);
  pool.Give(big);
  pool.Give(mid);
  pool.Give(small);
  // 9 MiB: the 16 MiB region (the smallest that fits), not the 64 MiB one.
  const PinnedPool::Region r = pool.Take(9 * kMiB, 9 * kMiB);
  EXPECT_EQ(mid.p, r.p);
  // Regions up to 4 MiB serve any smaller need.
  const PinnedPool::Region tiny = pool.Take(64, 64);
  EXPECT_EQ(small.p, tiny.p);
  // 12 MiB: the 64 MiB region is more than 4x that, so a new one; mapping
  // it would take the pool past its busiest moment (81 MiB in use), so the
  // free 64 MiB region goes first.
  const PinnedPool::Region n = pool.Take(12 * kMiB, 12 * kMiB);
  EXPECT_NE(nullptr, n.p);
  EXPECT_EQ(12 * kMiB, n.bytes);
  EXPECT_EQ(4u, pool.GetStats().maps);
  EXPECT_EQ((64 + 16 + 1 + 12) * kMiB, pool.GetStats().mapped_bytes);  // the unmapped one too
  EXPECT_EQ(3, live_maps.load());
  EXPECT_EQ(29 * kMiB, pool.GetStats().pinned_bytes);
  pool.Give(r);
  pool.Give(n);
  pool.Give(tiny);
}

// A buffer that grows leaves its smaller region behind: the pool unmaps it
// to make room for the larger one, so no more is mapped than the busiest
// moment needs, and the grown region is the one kept.
TEST_F(PinnedPoolTest, GrownBufferLeavesNoStaleRegion) {
  PinnedPool pool(memory_);
  const PinnedPool::Region first = pool.Take(10 * kMiB, 10 * kMiB);
  const PinnedPool::Region other = pool.Take(5 * kMiB, 5 * kMiB);  // another buffer's
  pool.Give(first);
  const PinnedPool::Region grown = pool.Take(30 * kMiB, 30 * kMiB);
  EXPECT_EQ(35 * kMiB, pool.GetStats().pinned_bytes);  // the 10 MiB region went first
  EXPECT_EQ(35 * kMiB, pool.GetStats().peak_pinned_bytes);
  EXPECT_EQ(2, live_maps.load());
  pool.Give(grown);
  pool.Give(other);
  const PinnedPool::Region again = pool.Take(30 * kMiB, 30 * kMiB);
  EXPECT_EQ(grown.p, again.p);
  const PinnedPool::Region other_again = pool.Take(5 * kMiB, 5 * kMiB);
  EXPECT_EQ(other.p, other_again.p);
  EXPECT_EQ(3u, pool.GetStats().maps);
  pool.Give(again);
  pool.Give(other_again);
}

// A small job after a large one: each buffer asks for the bytes it needs
// now (min) and its own size (want). It takes back a region of its own
// size, not the smallest that fits its need: that one may be another
// buffer's, which would then find none within the slack rule and pin a new
// one, unmapping a free region the next buffer needs (in the database with
// 16 subcompactions: 289 regions pinned in 107 jobs).
TEST_F(PinnedPoolTest, SmallJobTakesEachBuffersOwnRegion) {
  PinnedPool pool(memory_);
  const size_t sizes[] = {450, 90, 150, 450};  // file arena, key arena, plan, output
  std::vector<PinnedPool::Region> large;
  for (size_t mb : sizes) large.push_back(pool.Take(mb * kMiB, mb * kMiB));
  for (const PinnedPool::Region& r : large) pool.Give(r);
  const size_t needs[] = {100, 20, 40, 100};
  std::vector<PinnedPool::Region> small;
  for (size_t i = 0; i < 4; ++i) small.push_back(pool.Take(needs[i] * kMiB, sizes[i] * kMiB));
  EXPECT_EQ(4u, pool.GetStats().maps);
  EXPECT_EQ((450 + 90 + 150 + 450) * kMiB, pool.GetStats().mapped_bytes);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(sizes[i] * kMiB, small[i].bytes) << i;
  EXPECT_EQ(large[1].p, small[1].p);  // the one region of its size
  EXPECT_EQ(large[2].p, small[2].p);
  for (const PinnedPool::Region& r : small) pool.Give(r);
  // Where no region of the size wanted is free, one of the size needed
  // (within the slack rule) still serves.
  const PinnedPool::Region grown = pool.Take(80 * kMiB, 700 * kMiB);
  EXPECT_EQ(90 * kMiB, grown.bytes);
  EXPECT_EQ(4u, pool.GetStats().maps);
  pool.Give(grown);
}

// Two executors' jobs at once, then one at a time: the second job takes
// what the first gave back instead of pinning its own.
TEST_F(PinnedPoolTest, ExecutorsTakeTurnsOnTheSameRegions) {
  PinnedPool pool(memory_);
  std::vector<PinnedPool::Region> a, b;
  for (size_t mb : {100, 20, 100}) a.push_back(pool.Take(mb * kMiB, mb * kMiB));
  for (const PinnedPool::Region& r : a) pool.Give(r);
  for (size_t mb : {90, 18, 100}) b.push_back(pool.Take(mb * kMiB, mb * kMiB));
  EXPECT_EQ(3u, pool.GetStats().maps);
  EXPECT_EQ(220 * kMiB, pool.GetStats().pinned_bytes);
  for (const PinnedPool::Region& r : b) pool.Give(r);
  EXPECT_EQ(220 * kMiB, pool.GetStats().free_bytes);
}

// When the last buffer detaches (the process closed its databases) the
// free regions are unmapped; one still in use stays until given back.
TEST_F(PinnedPoolTest, LastDetachUnmapsTheFreeRegions) {
  PinnedPool pool(memory_);
  pool.Attach();
  pool.Attach();
  const PinnedPool::Region a = pool.Take(8 * kMiB, 8 * kMiB);
  const PinnedPool::Region b = pool.Take(2 * kMiB, 2 * kMiB);
  pool.Give(a);
  pool.Detach();  // one user left
  EXPECT_EQ(2, live_maps.load());
  pool.Detach();  // none: a (free) goes, b (in use) stays
  EXPECT_EQ(1, live_maps.load());
  EXPECT_EQ(2 * kMiB, pool.GetStats().pinned_bytes);
  EXPECT_EQ(0u, pool.GetStats().free_bytes);
  pool.Give(b);  // kept for a later user, unmapped with the pool
  EXPECT_EQ(1, live_maps.load());
}

TEST_F(PinnedPoolTest, FallsBackToTheExactSizeThenFails) {
  PinnedPool pool(memory_);
  fail_maps = true;
  const PinnedPool::Region none = pool.Take(kMiB, 2 * kMiB);
  EXPECT_EQ(nullptr, none.p);
  EXPECT_EQ(0u, none.bytes);
  EXPECT_EQ(0u, pool.GetStats().pinned_bytes);
  pool.Give(none);  // nothing
  fail_maps = false;
  const PinnedPool::Region r = pool.Take(kMiB, 2 * kMiB);
  EXPECT_NE(nullptr, r.p);
  pool.Give(r);
}

#if defined(ACCELKV_WITH_CUDA)
void* AlignedMap(size_t bytes) {
  live_maps++;
  return std::aligned_alloc(4096, (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096);
}

// A device's buffers (PinnedBuffer over the pool, as
// KeySortDevice::ReleaseHostBuffers gives them back after each job) through
// jobs of varying sizes: once each buffer reached its largest size, no job
// pins a region. Asked by the bytes needed alone, the pool pinned 2.7
// regions a job in the database with 16 subcompactions.
TEST_F(PinnedPoolTest, BuffersOfVaryingJobsPinOnlyWhenOneGrows) {
  PinnedPool pool(PinnedPool::Memory{&AlignedMap, &TestUnmap});
  // The file arena, key arena, plan and output; the output is either the
  // whole output or the smaller ring.
  std::vector<std::unique_ptr<PinnedBuffer>> buffers;
  for (int i = 0; i < 4; ++i) buffers.push_back(std::make_unique<PinnedBuffer>(&pool));
  std::mt19937 rng(7);
  std::vector<uint64_t> largest(buffers.size(), 0);
  uint64_t growths = 0;
  uint64_t maps_at_warm = 0;
  for (int job = 0; job < 200; ++job) {
    const uint64_t in = (8 + rng() % 56) * kMiB;  // 8-63 MiB of input
    const bool ring = rng() % 2 == 0;
    const uint64_t needs[] = {in, in * 15 / 100, in * 30 / 100,
                              ring ? in * 45 / 100 : in * 90 / 100};
    for (size_t b = 0; b < buffers.size(); ++b) {
      uint8_t* p = nullptr;
      ASSERT_TRUE(buffers[b]->Get(needs[b], "test", &p).ok());
      p[needs[b] - 1] = 1;  // the bytes are there
      if (job >= 20 && needs[b] > largest[b]) growths++;
      largest[b] = std::max(largest[b], needs[b]);
    }
    for (auto& b : buffers) b->Release();
    if (job == 19) maps_at_warm = pool.GetStats().maps;
  }
  // Each growth past a buffer's largest need may pin one region.
  EXPECT_LE(pool.GetStats().maps - maps_at_warm, growths);
  buffers.clear();
}
#endif

// Many threads taking and giving at once (run under TSan in CI): every
// region is handed to one taker at a time, and all are back at the end.
TEST_F(PinnedPoolTest, ConcurrentTakesAndGives) {
  PinnedPool pool(memory_);
  std::vector<std::thread> threads;
  std::atomic<int> overlaps{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&pool, &overlaps, t] {
      for (int i = 0; i < 200; ++i) {
        const size_t bytes = (1 + (i + t) % 5) * kMiB;
        const PinnedPool::Region r = pool.Take(bytes, bytes);
        ASSERT_NE(nullptr, r.p);
        std::atomic_ref<int> mark(*static_cast<int*>(r.p));
        if (mark.exchange(1) == 1) overlaps++;  // another holder wrote it
        mark.store(0);
        pool.Give(r);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(0, overlaps.load());
  const PinnedPool::Stats st = pool.GetStats();
  EXPECT_EQ(st.pinned_bytes, st.free_bytes);
  EXPECT_LE(st.pinned_bytes, 8 * 5 * kMiB);
}

}  // namespace
}  // namespace gpu
}  // namespace accelkv
