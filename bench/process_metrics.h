// Process-wide resource counters, read the same way for every engine (all
// engines run inside this process):
//   - storage I/O from /proc/self/io (write_bytes: bytes this process caused
//     to be sent to the storage layer, the numerator of write amplification)
//   - CPU seconds (user + system) from getrusage(RUSAGE_SELF)
//   - peak resident set size (VmHWM from /proc/self/status, which
//     ResetPeakRss restarts by writing "5" to /proc/self/clear_refs; falls
//     back to ru_maxrss, the peak of the whole process)
//   - bytes of the files under a directory (space amplification numerator)
//
// Thread safety: all functions may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace accelkv_bench {

struct IoCounters {
  bool available = false;
  uint64_t write_bytes = 0;
  uint64_t cancelled_write_bytes = 0;
  uint64_t read_bytes = 0;
  uint64_t wchar = 0;  // bytes passed to write-like syscalls
};

IoCounters ReadIoCounters();
// user + system CPU seconds of this process so far.
double CpuSeconds();
// CPU seconds of each live thread of this process so far, by thread id,
// with its name (/proc/self/task/*/schedstat, nanosecond precision, and
// comm). Threads that have exited are not listed: CpuSeconds counts them.
struct ThreadCpu {
  std::string name;
  double seconds = 0;
};
std::map<int, ThreadCpu> ThreadCpuTable();
// Restarts the peak-RSS window; false if the kernel does not allow it.
bool ResetPeakRss();
// Peak RSS in bytes since the last successful ResetPeakRss (or process start).
uint64_t PeakRssBytes();
// Sum of regular-file sizes under path (recursively); 0 if absent.
uint64_t DirectoryBytes(const std::string& path);

}  // namespace accelkv_bench
