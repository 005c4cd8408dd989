#include "cpu_stress.h"

#include <time.h>

#include <cmath>

namespace accelkv_bench {

namespace {
uint64_t ThreadCpuNanos() {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
}  // namespace

double CpuStress::CpuSeconds() const {
  uint64_t ns = retired_cpu_ns_;
  for (int i = 0; i < cpu_slots_; i++) ns += cpu_ns_[i].load(std::memory_order_relaxed);
  return static_cast<double>(ns) / 1e9;
}

void CpuStress::Start(int threads) {
  Stop();
  stop_.store(false);
  cpu_ns_.reset(new std::atomic<uint64_t>[threads]);
  cpu_slots_ = threads;
  for (int t = 0; t < threads; t++) cpu_ns_[t].store(0);
  for (int t = 0; t < threads; t++) {
    threads_.emplace_back([this, t] {
      double x = 1.0 + t;
      uint64_t h = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(t + 1);
      while (!stop_.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 4096; i++) {
          x = std::sqrt(x * 1.000001 + 1.0);
          h ^= h << 13;
          h ^= h >> 7;
          h ^= h << 17;
        }
        // Publishing the result keeps the compiler from dropping the loop.
        sink_.store(h ^ static_cast<uint64_t>(x), std::memory_order_relaxed);
        iterations_.fetch_add(1, std::memory_order_relaxed);
        cpu_ns_[t].store(ThreadCpuNanos(), std::memory_order_relaxed);
      }
    });
  }
}

void CpuStress::Stop() {
  stop_.store(true);
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  for (int i = 0; i < cpu_slots_; i++) retired_cpu_ns_ += cpu_ns_[i].load();
  cpu_slots_ = 0;
}

}  // namespace accelkv_bench
