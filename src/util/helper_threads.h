// HelperThreads: a process-wide cache of helper threads for short pieces of
// parallel or background work: the GPU executor's file reads, writes and
// plan ranges (about 50 pieces per compaction job), the mmap WAL's next
// window mapped ahead, and direct-I/O files' staging buffers written behind
// the appender (src/env/). A task goes to a thread that is
// waiting for one, or to a new thread when none is; a thread idle for
// kIdleSeconds ends. Against a thread started and joined per piece: GPU
// compaction 4-9% faster at 32-128 B values, 3-6% less CPU
// (bench/results/2026-11-24-h100-helper-threads.md).
//
// A task queued while no thread waits starts a new one, so tasks may wait
// for one another. Run fails when no thread can be started: callers treat a
// helper as optional (the caller does whatever no helper took, as
// ParallelFor and OrderedWorkers in gpu/gpu_util.h do).
//
// Thread safety: Run may be called from any thread, also from a task. The
// object is never destroyed (Get leaks it), so waiting threads need no join.
// A child process forked while helpers ran gets a fresh object from Get.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

namespace accelkv {

class HelperThreads {
 public:
  static constexpr int kIdleSeconds = 10;

  static HelperThreads* Get();

  // Runs task on a helper thread. False if no thread could be started (the
  // task is dropped: the caller does the work itself).
  bool Run(std::function<void()> task);

  // Ends the threads waiting for a task now, instead of after kIdleSeconds
  // (a test about to fork wants a single-threaded process). A thread ends
  // just after it leaves Loop, so threads() may reach 0 a little before the
  // process's thread count falls.
  void ReleaseIdle();
  // Threads alive now, waiting or running, and those waiting (for tests).
  size_t threads() const;
  size_t idle() const;

 private:
  HelperThreads() = default;
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // (under mu_)
  size_t idle_ = 0;                          // threads waiting for a task (under mu_)
  size_t threads_ = 0;                       // threads alive (under mu_)
  uint64_t release_ = 0;                     // ReleaseIdle calls (under mu_)
};

}  // namespace accelkv
