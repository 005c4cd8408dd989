#include "util/thread_cpu.h"

#include <sys/resource.h>
#include <sys/time.h>

namespace accelkv {

double ThreadCpuSeconds() {
  struct rusage ru {};
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return 0;
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
  };
  return seconds(ru.ru_utime) + seconds(ru.ru_stime);
}

}  // namespace accelkv
