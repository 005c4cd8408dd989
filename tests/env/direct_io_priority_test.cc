// DirectIoPriorityGate (src/env/direct_io_priority.h): low-priority direct
// requests go out at once with no high-priority file open, at most the
// limit at a time while one is, and all of them go out once it closes.
#include "env/direct_io_priority.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace accelkv {
namespace {

using std::chrono_literals::operator""ms;

TEST(DirectIoPriorityGate, LowRequestsAreNotLimitedWithoutAHighFile) {
  DirectIoPriorityGate gate(2);
  for (int i = 0; i < 10; ++i) gate.AcquireLow();  // would block at the third if limited
  for (int i = 0; i < 10; ++i) gate.ReleaseLow();
  const DirectIoPriorityGate::Counts c = gate.counts();
  EXPECT_EQ(10u, c.low_admitted);
  EXPECT_EQ(0u, c.low_waited);
  EXPECT_EQ(0, c.max_low_in_flight_while_high);
}

TEST(DirectIoPriorityGate, AHighFileHoldsLowRequestsToTheLimit) {
  DirectIoPriorityGate gate(2);
  gate.HighFileOpened();
  gate.AcquireLow();
  gate.AcquireLow();
  std::atomic<bool> third{false};
  std::thread t([&] {
    gate.AcquireLow();
    third = true;
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(third.load()) << "a third low request went out beside a high-priority file";
  gate.ReleaseLow();  // one slot frees: the third goes out
  t.join();
  EXPECT_TRUE(third.load());
  gate.ReleaseLow();
  gate.ReleaseLow();
  gate.HighFileClosed();
  const DirectIoPriorityGate::Counts c = gate.counts();
  EXPECT_EQ(3u, c.low_admitted);
  EXPECT_EQ(1u, c.low_waited);
  EXPECT_EQ(2, c.max_low_in_flight_while_high);
}

TEST(DirectIoPriorityGate, ClosingTheLastHighFileReleasesEveryWaiter) {
  DirectIoPriorityGate gate(1);
  gate.HighFileOpened();
  gate.HighFileOpened();
  gate.AcquireLow();  // held throughout
  std::atomic<int> out{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&] {
      gate.AcquireLow();
      ++out;
    });
  }
  std::this_thread::sleep_for(50ms);
  gate.HighFileClosed();  // one high file is still open
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(0, out.load());
  gate.HighFileClosed();
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(3, out.load());
  for (int i = 0; i < 4; ++i) gate.ReleaseLow();
  EXPECT_EQ(3u, gate.counts().low_waited);
}

TEST(DirectIoPriorityGate, NoLimitWhenTheLimitIsZero) {
  DirectIoPriorityGate gate(0);
  gate.HighFileOpened();
  for (int i = 0; i < 5; ++i) gate.AcquireLow();
  for (int i = 0; i < 5; ++i) gate.ReleaseLow();
  gate.HighFileClosed();
  EXPECT_EQ(0u, gate.counts().low_waited);
  EXPECT_EQ(5, gate.counts().max_low_in_flight_while_high);
}

// Many threads issue low requests while high files open and close: the
// gate never admits one past the limit while a high file is open, and every
// request goes out.
TEST(DirectIoPriorityGate, ConcurrentRequestsKeepTheLimit) {
  constexpr int kLimit = 3;
  constexpr int kWorkers = 8;
  constexpr int kRequests = 2000;
  DirectIoPriorityGate gate(kLimit);
  std::atomic<bool> stop{false};
  std::thread flusher([&] {
    while (!stop) {
      gate.HighFileOpened();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      gate.HighFileClosed();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      for (int i = 0; i < kRequests; ++i) {
        LowPriorityRequest r(&gate);
        std::this_thread::yield();
      }
    });
  }
  for (std::thread& t : workers) t.join();
  stop = true;
  flusher.join();
  const DirectIoPriorityGate::Counts c = gate.counts();
  EXPECT_EQ(uint64_t{kWorkers} * kRequests, c.low_admitted);
  EXPECT_GE(c.max_low_in_flight_while_high, 1);
  EXPECT_LE(c.max_low_in_flight_while_high, kLimit);
}

}  // namespace
}  // namespace accelkv
