#include "util/helper_threads.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace accelkv {
namespace {

// Counts down to zero; Wait returns false after 30 s (a lost task).
class Latch {
 public:
  explicit Latch(int n) : n_(n) {}
  void CountDown() {
    std::lock_guard<std::mutex> l(mu_);
    if (--n_ == 0) cv_.notify_all();
  }
  bool Wait() {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(30), [this] { return n_ <= 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_;
};

// Polls until done() or 30 s have passed; done()'s last answer.
template <typename Done>
bool WaitFor(Done done) {
  for (int i = 0; i < 30000 && !done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

bool WaitForIdle(size_t n) {
  return WaitFor([n] { return HelperThreads::Get()->idle() >= n; });
}

TEST(HelperThreads, EveryTaskRunsOnceEvenWhenAllThreadsAreBusy) {
  constexpr int kTasks = 200;
  auto runs = std::make_shared<std::vector<std::atomic<int>>>(kTasks);
  auto done = std::make_shared<Latch>(kTasks);
  for (int i = 0; i < kTasks; ++i) {
    ASSERT_TRUE(HelperThreads::Get()->Run([runs, done, i] {
      (*runs)[i].fetch_add(1);
      done->CountDown();
    }));
  }
  ASSERT_TRUE(done->Wait());
  for (int i = 0; i < kTasks; ++i) EXPECT_EQ(1, (*runs)[i].load()) << i;
}

// Runs n tasks on HelperThreads that wait until all n have started, and
// waits for them. The latches are shared: a task may still be leaving
// CountDown when the waiter returns.
void RunMeetingTasks(int n) {
  auto started = std::make_shared<Latch>(n);
  auto done = std::make_shared<Latch>(n);
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(HelperThreads::Get()->Run([started, done] {
      started->CountDown();
      EXPECT_TRUE(started->Wait());
      done->CountDown();
    }));
  }
  ASSERT_TRUE(done->Wait());
}

// Tasks that wait for one another all get threads: a task queued while
// every thread is busy starts a new one.
TEST(HelperThreads, TasksThatMeetEachOtherAllRun) {
  constexpr int kTasks = 8;
  RunMeetingTasks(kTasks);
  EXPECT_GE(HelperThreads::Get()->threads(), static_cast<size_t>(kTasks));
}

// Waiting threads take the next tasks: no thread starts for a batch no
// larger than the threads waiting.
TEST(HelperThreads, WaitingThreadsAreReused) {
  constexpr int kTasks = 6;
  for (int round = 0; round < 3; ++round) {
    RunMeetingTasks(kTasks);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(WaitForIdle(kTasks));
    const size_t threads = HelperThreads::Get()->threads();
    auto again = std::make_shared<Latch>(kTasks);
    for (int i = 0; i < kTasks; ++i) {
      ASSERT_TRUE(HelperThreads::Get()->Run([again] { again->CountDown(); }));
    }
    ASSERT_TRUE(again->Wait());
    // Threads may end idle meanwhile (HelperThreads::kIdleSeconds), never start.
    EXPECT_LE(HelperThreads::Get()->threads(), threads) << "round " << round;
    ASSERT_TRUE(WaitForIdle(kTasks));
  }
}

TEST(HelperThreads, TasksMayQueueTasks) {
  constexpr int kOuter = 16;
  constexpr int kInner = 16;
  auto done = std::make_shared<Latch>(kOuter * kInner);
  for (int i = 0; i < kOuter; ++i) {
    ASSERT_TRUE(HelperThreads::Get()->Run([done] {
      for (int j = 0; j < kInner; ++j) {
        EXPECT_TRUE(HelperThreads::Get()->Run([done] { done->CountDown(); }));
      }
    }));
  }
  ASSERT_TRUE(done->Wait());
}

TEST(HelperThreads, ReleaseIdleEndsWaitingThreadsAndLaterTasksStillRun) {
  RunMeetingTasks(4);
  if (HasFatalFailure()) return;
  // Every thread waiting, not only these 4: a thread of an earlier test in
  // this process (run in one binary, or repeated) still leaving its task
  // would wait only after ReleaseIdle, and live on for kIdleSeconds.
  ASSERT_TRUE(
      WaitFor([] { return HelperThreads::Get()->idle() >= HelperThreads::Get()->threads(); }));
  ASSERT_TRUE(WaitForIdle(4));
  HelperThreads::Get()->ReleaseIdle();
  for (int i = 0; i < 5000 && HelperThreads::Get()->threads() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(HelperThreads::Get()->threads(), 0u) << "well before kIdleSeconds";
  auto done = std::make_shared<Latch>(3);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(HelperThreads::Get()->Run([done] { done->CountDown(); }));
  }
  ASSERT_TRUE(done->Wait());
}

// A child forked while helper threads wait has none of them: its tasks must
// still run (Get gives the child a fresh object).
TEST(HelperThreads, ForkedChildRunsTasks) {
  RunMeetingTasks(2);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(WaitForIdle(2));
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto done = std::make_shared<Latch>(4);
    for (int i = 0; i < 4; ++i) {
      if (!HelperThreads::Get()->Run([done] { done->CountDown(); })) ::_exit(2);
    }
    ::_exit(done->Wait() ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no thread started, 3: a task was lost";
}

}  // namespace
}  // namespace accelkv
