// ProgressReporter: while a workload runs, prints a line every interval:
//   [rocksdb fillrandom] 1200000/2000000 ops (60.0%)  241003 ops/s now  5.0 s elapsed  3.3 s left
// "now" is the rate over the last interval; time left comes from the op
// budget (or the --duration).
//
// Thread safety: the reporter runs its own thread; the counter callback must
// be safe to call from it. Stop (or the destructor) joins it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace accelkv_bench {

class ProgressReporter {
 public:
  // interval_sec <= 0: prints nothing.
  ProgressReporter(std::string label, uint64_t total_ops, double duration_sec, double interval_sec,
                   std::function<uint64_t()> ops_done, std::ostream* out);
  ~ProgressReporter() { Stop(); }
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  void Stop();

  // One progress line (no newline). total_ops 0: unknown.
  static std::string FormatLine(const std::string& label, uint64_t done, uint64_t total_ops,
                                double duration_sec, double elapsed_sec, double rate_now);

 private:
  void Loop();

  std::string label_;
  uint64_t total_ops_;
  double duration_sec_;
  double interval_sec_;
  std::function<uint64_t()> ops_done_;
  std::ostream* out_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace accelkv_bench
