#include "gpu/device_memory_ledger.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace accelkv {
namespace gpu {
namespace {

TEST(DeviceMemoryLedgerTest, ReservesUpToTheCapacity) {
  DeviceMemoryLedger ledger(100);
  EXPECT_TRUE(ledger.TryReserve(60));
  EXPECT_FALSE(ledger.TryReserve(41));
  EXPECT_TRUE(ledger.TryReserve(40));
  EXPECT_EQ(100u, ledger.reserved());
  EXPECT_FALSE(ledger.TryReserve(1));
  ledger.Release(60);
  EXPECT_EQ(40u, ledger.reserved());
  EXPECT_TRUE(ledger.TryReserve(60));
  EXPECT_FALSE(ledger.TryReserve(~uint64_t{0}));  // no overflow past the capacity
  ledger.Release(100);
  EXPECT_EQ(0u, ledger.reserved());
  EXPECT_TRUE(ledger.TryReserve(0));
}

TEST(DeviceMemoryLedgerTest, ReservationReleasesOnScopeExit) {
  DeviceMemoryLedger ledger(10);
  {
    LedgerReservation r;
    EXPECT_TRUE(r.Take(&ledger, 7));
    EXPECT_EQ(7u, ledger.reserved());
    LedgerReservation refused;
    EXPECT_FALSE(refused.Take(&ledger, 4));  // holds nothing: releases nothing
  }
  EXPECT_EQ(0u, ledger.reserved());
}

TEST(DeviceMemoryLedgerTest, OneLedgerPerDeviceWhileHeld) {
  auto a = DeviceMemoryLedger::ForDevice("ledger-test-device", 100);
  auto b = DeviceMemoryLedger::ForDevice("ledger-test-device", 5);  // smaller: kept at 100
  auto other = DeviceMemoryLedger::ForDevice("ledger-test-other", 5);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(100u, b->capacity());
  EXPECT_EQ(a.get(), DeviceMemoryLedger::ForDevice("ledger-test-device", 150).get());
  EXPECT_EQ(150u, a->capacity());  // more memory free for a later executor
  EXPECT_NE(a.get(), other.get());
  EXPECT_EQ(5u, other->capacity());
  a.reset();
  b.reset();
  // None held: the next executor's capacity makes a new one.
  EXPECT_EQ(7u, DeviceMemoryLedger::ForDevice("ledger-test-device", 7)->capacity());
}

// Threads reserving and releasing at once never hold more than the
// capacity between them.
TEST(DeviceMemoryLedgerTest, ConcurrentReservationsStayUnderTheCapacity) {
  DeviceMemoryLedger ledger(1000);
  std::atomic<uint64_t> held{0};
  std::atomic<bool> over{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const uint64_t bytes = 300 + 50 * static_cast<uint64_t>(t);
      for (int i = 0; i < 2000; ++i) {
        LedgerReservation r;
        if (!r.Take(&ledger, bytes)) continue;
        if (held.fetch_add(bytes) + bytes > 1000) over = true;
        held.fetch_sub(bytes);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(over.load());
  EXPECT_EQ(0u, ledger.reserved());
}

}  // namespace
}  // namespace gpu
}  // namespace accelkv
