// DirectIoPriorityGate: the POSIX Env's admission of direct-I/O requests by
// IOPriority (include/accelkv/env.h), process-wide as the device they share.
// While a high-priority direct-write file is open (a flush's table being
// written), low-priority requests (a compaction's reads and writes, each
// pread or pwrite of at most 4 MiB) are admitted at most
// low_in_flight_while_high at a time; with no such file open they go out at
// once. A device serves its queue about in order, so a flush's 1 MiB write
// otherwise waits behind every compaction request queued before it: under a
// 120M-key load with 15 busy threads the GPU executor's up to 16 writer and
// 16 reader threads kept up to 128 MiB ahead of it, and its flushes took
// 1.7-3.1x the CPU executor's (bench/results/2026-11-26-h100-stress-pairs-w8.md).
// RocksDB gets the same from its rate limiter's IO_HIGH for flushes. Low
// requests admitted before a high file opened finish as they are; a waiting
// one goes out when an admitted one ends or the last high file closes, so
// low requests always progress (the limit is at least one).
//
// Internal to src/env/. Thread safety: every member may be called from any
// thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "util/thread_annotations.h"

namespace accelkv {

// Low-priority direct requests admitted at a time while a high-priority file
// is open, unless ACCELKV_DIRECT_IO_LOW_IN_FLIGHT sets another (read once;
// 0: no limit, for A/B runs).
inline constexpr int kDefaultLowInFlightWhileHigh = 2;

class DirectIoPriorityGate {
 public:
  struct Counts {
    uint64_t low_admitted = 0;             // low requests admitted
    uint64_t low_waited = 0;               // of them, those that waited for a high file
    int max_low_in_flight_while_high = 0;  // the most in flight while one was open
  };

  // limit: low requests admitted at a time while a high file is open
  // (<= 0: no limit).
  explicit DirectIoPriorityGate(int limit) : limit_(limit) {}
  DirectIoPriorityGate(const DirectIoPriorityGate&) = delete;
  DirectIoPriorityGate& operator=(const DirectIoPriorityGate&) = delete;

  // The process-wide gate of the POSIX Env's direct-I/O files. Never deleted.
  static DirectIoPriorityGate* Get();

  void HighFileOpened() EXCLUDES(mu_);
  void HighFileClosed() EXCLUDES(mu_);

  // Waits until a low request may go out, and counts it in flight until
  // ReleaseLow.
  void AcquireLow() EXCLUDES(mu_);
  void ReleaseLow() EXCLUDES(mu_);

  Counts counts() const EXCLUDES(mu_);

 private:
  bool Limited() const REQUIRES(mu_) { return limit_ > 0 && high_open_ > 0; }

  const int limit_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int high_open_ GUARDED_BY(mu_) = 0;
  int low_in_flight_ GUARDED_BY(mu_) = 0;
  Counts counts_ GUARDED_BY(mu_);
};

// One low-priority request's admission (a no-op for a null gate: the
// request is high priority).
class LowPriorityRequest {
 public:
  explicit LowPriorityRequest(DirectIoPriorityGate* gate) : gate_(gate) {
    if (gate_ != nullptr) gate_->AcquireLow();
  }
  ~LowPriorityRequest() {
    if (gate_ != nullptr) gate_->ReleaseLow();
  }
  LowPriorityRequest(const LowPriorityRequest&) = delete;
  LowPriorityRequest& operator=(const LowPriorityRequest&) = delete;

 private:
  DirectIoPriorityGate* const gate_;
};

}  // namespace accelkv
