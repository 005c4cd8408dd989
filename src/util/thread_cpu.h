// ThreadCpuSeconds: user + system CPU seconds the calling thread has used
// (CLOCK_THREAD_CPUTIME_ID, the running slice included); 0 if the system
// cannot tell. Compaction executors sum it over their threads for a job's
// CPU seconds.
//
// Thread safety: safe for concurrent use.
#pragma once

namespace accelkv {

double ThreadCpuSeconds();

}  // namespace accelkv
