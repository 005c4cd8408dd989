// Small helpers the GPU executor's files share: stage timing, the
// FileMetaData of a finished output table, and a parallel loop for the
// file reads and writes.
//
// Thread safety: pure functions (ParallelFor's fn must be safe to call
// concurrently for different indices).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace accelkv {

struct FileMetaData;
struct TableProperties;

namespace gpu {

// Microseconds from start to now (steady clock), for the stage times.
inline uint64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
}

// The metadata of output table `number` of file_size bytes whose
// properties are props (keys, sequence range, entry and deletion counts).
FileMetaData OutputFileMeta(uint64_t number, uint64_t file_size, const TableProperties& props);

// Threads for n independent file reads or writes: up to 8, at most the
// hardware threads and n (1 runs them on the caller).
size_t FileThreads(size_t n);

// Calls fn(i) once for every i in [0, n), on `threads` threads (the caller
// is one of them), each taking the next index when done with one. Returns
// the CPU seconds the helper threads used (the caller's own are in its
// ThreadCpuSeconds), so a job's CPU seconds can count them.
double ParallelFor(size_t n, size_t threads, const std::function<void(size_t)>& fn);

}  // namespace gpu
}  // namespace accelkv
