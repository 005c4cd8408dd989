#include "gpu/gpu_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

namespace accelkv {
namespace gpu {
namespace {

TEST(ParallelFor, EveryIndexOnce) {
  for (size_t threads : {1, 2, 4, 16, 64}) {
    for (size_t n : {0, 1, 3, 100, 5000}) {
      std::vector<std::atomic<int>> runs(n);
      ParallelFor(n, threads, [&](size_t i) { runs[i].fetch_add(1); });
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(1, runs[i].load()) << threads << " " << n << " " << i;
    }
  }
}

// Nested loops (a helper runs a ParallelFor) finish: a helper joins only if
// free, and the caller does what none took.
TEST(ParallelFor, NestedLoopsFinish) {
  std::atomic<int> sum{0};
  ParallelFor(16, 16,
              [&](size_t) { ParallelFor(16, 16, [&](size_t j) { sum.fetch_add(int(j)); }); });
  EXPECT_EQ(16 * (15 * 16 / 2), sum.load());
}

// The helpers' CPU seconds come back: each index spins until several
// threads took part (or 2 s passed), burning CPU on every one of them.
TEST(ParallelFor, ReturnsTheHelpersCpuSeconds) {
  std::atomic<int> entered{0};
  const double cpu = ParallelFor(4, 4, [&](size_t) {
    entered.fetch_add(1);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    const auto min_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (std::chrono::steady_clock::now() < min_end ||
           (entered.load() < 2 && std::chrono::steady_clock::now() < end)) {
    }
  });
  ASSERT_GE(entered.load(), 4);
  EXPECT_GT(cpu, 0.005);
}

TEST(OrderedWorkers, EveryReleasedIndexOnce) {
  for (size_t helpers : {0, 1, 4, 16}) {
    constexpr size_t kItems = 500;
    std::vector<std::atomic<int>> runs(kItems);
    std::mutex mu;
    std::vector<size_t> taken;
    OrderedWorkers workers(helpers, [&](size_t i) {
      {
        std::lock_guard<std::mutex> l(mu);
        taken.push_back(i);
      }
      runs[i].fetch_add(1);
    });
    for (size_t end = 10; end <= kItems; end += 10) workers.Release(end);
    workers.Close();
    for (size_t i = 0; i < kItems; ++i) ASSERT_EQ(1, runs[i].load()) << helpers << " " << i;
    std::set<size_t> seen(taken.begin(), taken.end());
    EXPECT_EQ(kItems, seen.size());
  }
}

// Objects made and dropped quickly: helper tasks that start after the
// object is gone find its work closed and touch nothing of it (ASan, TSan).
TEST(OrderedWorkers, LateHelpersTouchNothingOfAClosedObject) {
  std::atomic<int> runs{0};
  for (int round = 0; round < 200; ++round) {
    OrderedWorkers workers(8, [&](size_t) { runs.fetch_add(1); });
    workers.Release(3);
  }
  EXPECT_EQ(200 * 3, runs.load());
}

TEST(FilePieces, NumberedInFileOrderAtLeastOneAFile) {
  const FilePieces pieces({10, 0, 1, 4, 5}, 4);  // 3, 1, 1, 1 and 2 pieces
  EXPECT_EQ(8u, pieces.total());
  const std::vector<uint64_t> begins = {0, 3, 4, 5, 6, 8};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(begins[i], pieces.begin(i));
    EXPECT_EQ(begins[i + 1] - begins[i], pieces.count(i));
  }
  const std::vector<size_t> file_of = {0, 0, 0, 1, 2, 3, 4, 4};
  for (uint64_t k = 0; k < pieces.total(); ++k) EXPECT_EQ(file_of[k], pieces.FileOf(k)) << k;
}

TEST(FirstFailure, KeepsTheFirstOfManyThreads) {
  FirstFailure failure;
  failure.Add(Status::OK());
  EXPECT_TRUE(failure.ok());
  failure.Add(Status::IOError("first"));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&failure] {
      for (int i = 0; i < 100; ++i)
        failure.Add(i % 2 == 0 ? Status::OK() : Status::Corruption("later"));
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(failure.ok());
  EXPECT_TRUE(failure.status().IsIOError()) << failure.status().ToString();
}

}  // namespace
}  // namespace gpu
}  // namespace accelkv
