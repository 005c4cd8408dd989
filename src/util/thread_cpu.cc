#include "util/thread_cpu.h"

#include <time.h>

namespace accelkv {

double ThreadCpuSeconds() {
  // CLOCK_THREAD_CPUTIME_ID counts the running slice too. getrusage's
  // RUSAGE_THREAD (used before) is brought up to date only at a scheduler
  // tick or switch, so a reading at the end of a few milliseconds of work
  // misses up to a tick: the GPU executor, whose helpers each run such
  // pieces, reported about 60% of its threads' CPU seconds on the H100
  // machine (bench/results/2026-11-24-h100-helper-threads.md).
  struct timespec ts {};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace accelkv
