// HostVector (host_vector.h): storage from the installed pinned-memory
// functions when there are some, ordinary storage otherwise or when they
// fail, and every allocation freed by the function that matches how it was
// made, whichever functions are installed when it is freed.
#include "gpu/host_vector.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>

namespace accelkv {
namespace {

int g_allocated = 0;
int g_freed = 0;
bool g_fail = false;

void* FakePinnedAllocate(size_t bytes) {
  if (g_fail) return nullptr;
  ++g_allocated;
  return std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
}
size_t g_freed_bytes = 0;
void FakePinnedFree(void* p, size_t bytes) {
  ++g_freed;
  g_freed_bytes += bytes;
  std::free(p);
}

// Installs the fake functions for one test and puts back what was there
// (a CUDA device's, when an earlier test made one).
class HostVectorTest : public testing::Test {
 protected:
  void SetUp() override {
    g_allocated = g_freed = 0;
    g_freed_bytes = 0;
    g_fail = false;
    saved_ = gpu::SetPinnedHostMemory(gpu::PinnedHostMemory{});
  }
  void TearDown() override { gpu::SetPinnedHostMemory(saved_); }

  gpu::PinnedHostMemory saved_;
};

TEST_F(HostVectorTest, OrdinaryWithoutPinnedMemoryAndAligned) {
  gpu::HostVector<uint64_t> v(1000, 7);
  EXPECT_FALSE(gpu::HostBytesPinned(v.data()));
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(v.data()) % 64);
  EXPECT_EQ(7u, v[999]);
  EXPECT_EQ(0, g_allocated);
}

TEST_F(HostVectorTest, PinnedOnceInstalledAndEachFreedItsOwnWay) {
  gpu::HostVector<uint32_t> before(100, 1);  // ordinary
  gpu::SetPinnedHostMemory(gpu::PinnedHostMemory{&FakePinnedAllocate, &FakePinnedFree});
  {
    gpu::HostVector<uint32_t> pinned(5000, 2);
    EXPECT_TRUE(gpu::HostBytesPinned(pinned.data()));
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(pinned.data()) % 64);
    EXPECT_EQ(1, g_allocated);
    pinned.resize(20000, 3);  // grows: a new pinned allocation, the old one freed
    EXPECT_EQ(2, g_allocated);
    EXPECT_EQ(1, g_freed);
    EXPECT_EQ(2u, pinned[4999]);
    EXPECT_EQ(3u, pinned[19999]);
    // Uninstalled while it lives: still freed with the pinned function.
    gpu::SetPinnedHostMemory(gpu::PinnedHostMemory{});
  }
  EXPECT_EQ(2, g_freed);
  // Each free got the size its allocation asked for (the data and a header).
  EXPECT_GE(g_freed_bytes, (5000u + 20000u) * sizeof(uint32_t));
  EXPECT_LE(g_freed_bytes, (5000u + 20000u) * sizeof(uint32_t) + 2 * 64);
  EXPECT_FALSE(gpu::HostBytesPinned(before.data()));
  before.resize(1u << 16);  // freed with std::free although the fakes were installed meanwhile
  EXPECT_EQ(2, g_freed);
}

TEST_F(HostVectorTest, FallsBackToOrdinaryWhenPinningFails) {
  gpu::SetPinnedHostMemory(gpu::PinnedHostMemory{&FakePinnedAllocate, &FakePinnedFree});
  g_fail = true;
  {
    gpu::HostVector<uint8_t> v(1u << 20, 9);
    EXPECT_FALSE(gpu::HostBytesPinned(v.data()));
    EXPECT_EQ(9u, v.back());
  }
  EXPECT_EQ(0, g_freed);
}

TEST_F(HostVectorTest, ImpossibleSizeThrowsBadAlloc) {
  gpu::HostAllocator<uint64_t> a;
  EXPECT_THROW(a.allocate(static_cast<size_t>(-1) / 4), std::bad_alloc);
  EXPECT_THROW(gpu::HostAllocateBytes(static_cast<size_t>(-1) - 8), std::bad_alloc);
}

}  // namespace
}  // namespace accelkv
