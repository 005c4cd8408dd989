#include "progress.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace accelkv_bench {

ProgressReporter::ProgressReporter(std::string label, uint64_t total_ops, double duration_sec,
                                   double interval_sec, std::function<uint64_t()> ops_done,
                                   std::ostream* out)
    : label_(std::move(label)),
      total_ops_(total_ops),
      duration_sec_(duration_sec),
      interval_sec_(interval_sec),
      ops_done_(std::move(ops_done)),
      out_(out) {
  if (interval_sec_ > 0 && out_ != nullptr) thread_ = std::thread([this] { Loop(); });
}

void ProgressReporter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string ProgressReporter::FormatLine(const std::string& label, uint64_t done,
                                         uint64_t total_ops, double duration_sec,
                                         double elapsed_sec, double rate_now) {
  char buf[256];
  std::string line = "[" + label + "] " + std::to_string(done);
  double left = -1;
  if (duration_sec > 0) {
    left = duration_sec - elapsed_sec;
  } else if (total_ops > 0) {
    std::snprintf(buf, sizeof(buf), "/%llu ops (%.1f%%)",
                  static_cast<unsigned long long>(total_ops),
                  100.0 * static_cast<double>(done) / static_cast<double>(total_ops));
    line += buf;
    const double avg = elapsed_sec > 0 ? static_cast<double>(done) / elapsed_sec : 0;
    if (avg > 0) left = static_cast<double>(total_ops - std::min(done, total_ops)) / avg;
  }
  if (duration_sec > 0 || total_ops == 0) line += " ops";
  std::snprintf(buf, sizeof(buf), "  %.0f ops/s now  %.1f s elapsed", rate_now, elapsed_sec);
  line += buf;
  if (left >= 0) {
    std::snprintf(buf, sizeof(buf), "  %.1f s left", left);
    line += buf;
  }
  return line;
}

void ProgressReporter::Loop() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto last_time = start;
  uint64_t last_ops = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait_for(lock, std::chrono::duration<double>(interval_sec_), [this] { return stop_; });
    if (stop_) return;
    const auto now = Clock::now();
    const uint64_t done = ops_done_();
    const double since_last = std::chrono::duration<double>(now - last_time).count();
    const double rate = since_last > 0 ? static_cast<double>(done - last_ops) / since_last : 0;
    const double elapsed = std::chrono::duration<double>(now - start).count();
    *out_ << FormatLine(label_, done, total_ops_, duration_sec_, elapsed, rate) << std::endl;
    last_time = now;
    last_ops = done;
  }
}

}  // namespace accelkv_bench
