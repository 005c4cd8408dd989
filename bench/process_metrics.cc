#include "process_metrics.h"

#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace accelkv_bench {

IoCounters ReadIoCounters() {
  IoCounters io;
  std::ifstream in("/proc/self/io");
  std::string name;
  uint64_t value = 0;
  while (in >> name >> value) {
    if (name == "write_bytes:") {
      io.write_bytes = value;
      io.available = true;
    } else if (name == "cancelled_write_bytes:") {
      io.cancelled_write_bytes = value;
    } else if (name == "read_bytes:") {
      io.read_bytes = value;
    } else if (name == "wchar:") {
      io.wchar = value;
    }
  }
  return io;
}

double CpuSeconds() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  auto seconds = [](const struct timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::map<int, ThreadCpu> ThreadCpuTable() {
  std::map<int, ThreadCpu> table;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const std::string tid = e.path().filename().string();
    std::ifstream sched(e.path() / "schedstat");
    uint64_t ns = 0;
    if (!(sched >> ns)) continue;  // exited meanwhile
    ThreadCpu& t = table[std::atoi(tid.c_str())];
    std::ifstream comm(e.path() / "comm");
    std::getline(comm, t.name);
    t.seconds = static_cast<double>(ns) / 1e9;
  }
  return table;
}

bool ResetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

uint64_t PeakRssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
    }
  }
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

uint64_t DirectoryBytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  uint64_t total = 0;
  fs::recursive_directory_iterator it(path, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      const uint64_t size = it->file_size(size_ec);
      if (!size_ec) total += size;
    }
  }
  return total;
}

}  // namespace accelkv_bench
