// CpuStress: N busy threads competing with the engine for the CPU, the way
// GPU-compaction papers emulate a loaded server (stress-ng --cpu N). Each
// thread spins on floating-point and integer work until Stop.
//
// Thread safety: Start and Stop from one thread; the destructor stops.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace accelkv_bench {

class CpuStress {
 public:
  CpuStress() = default;
  ~CpuStress() { Stop(); }
  CpuStress(const CpuStress&) = delete;
  CpuStress& operator=(const CpuStress&) = delete;

  void Start(int threads);
  void Stop();
  int running() const { return static_cast<int>(threads_.size()); }
  // Work loops completed by all threads (shows the threads ran).
  uint64_t iterations() const { return iterations_.load(std::memory_order_relaxed); }
  // CPU seconds the stress threads have used (updated every work loop), so
  // the runner can leave them out of the engine's CPU time.
  double CpuSeconds() const;

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> iterations_{0};
  std::atomic<uint64_t> sink_{0};
  std::vector<std::thread> threads_;
  std::unique_ptr<std::atomic<uint64_t>[]> cpu_ns_;  // per thread
  int cpu_slots_ = 0;
  uint64_t retired_cpu_ns_ = 0;  // of threads already stopped
};

}  // namespace accelkv_bench
