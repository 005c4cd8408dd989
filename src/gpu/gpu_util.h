// Small helpers the GPU executor's files share: stage timing, the
// FileMetaData of a finished output table, a parallel loop for the file
// reads and writes, OrderedWorkers for writes that overlap the device, and
// the numbering of files' pieces and their first failure for both.
//
// Thread safety: pure functions (ParallelFor's and OrderedWorkers' fn must
// be safe to call concurrently for different indices); an OrderedWorkers
// object is driven by one thread; FilePieces is immutable; FirstFailure is
// safe for concurrent use.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "accelkv/status.h"

namespace accelkv {

struct CompactionJobResult;
struct FileMetaData;
struct TableProperties;

namespace gpu {

// Microseconds from start to now (steady clock), for the stage times.
inline uint64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
}

// A job's CPU seconds by stage (CompactionJobResult::stage_cpu_seconds).
// A CpuStageScope adds the calling thread's CPU seconds from its
// construction to its destruction to its stage, less those of scopes nested
// in it on the same thread (which count for their own stages). The helper
// threads' CPU seconds of its work (ParallelFor's, OrderedWorkers') are
// added to *helpers(); they go to its stage and to result->cpu_seconds (the
// job thread's own are added once, by the executor: End of the scope
// around the whole job returns them).
class CpuStageScope {
 public:
  CpuStageScope(CompactionJobResult* result, const char* stage);
  ~CpuStageScope() { End(); }
  // Ends the scope (the destructor's work) and returns the thread's CPU
  // seconds since the construction, nested scopes' included; 0 when ended.
  double End();
  double* helpers() { return &helper_seconds_; }
  CpuStageScope(const CpuStageScope&) = delete;
  CpuStageScope& operator=(const CpuStageScope&) = delete;

 private:
  CompactionJobResult* const result_;
  const char* const stage_;
  const double start_;
  double nested_ = 0;  // CPU seconds of scopes nested in this one
  double helper_seconds_ = 0;
  CpuStageScope* const parent_;
  bool ended_ = false;
};

// The metadata of output table `number` of file_size bytes whose
// properties are props (keys, sequence range, entry and deletion counts).
FileMetaData OutputFileMeta(uint64_t number, uint64_t file_size, const TableProperties& props);

// Threads for n independent file reads or writes: up to 16, at most the
// hardware threads and n (1 runs them on the caller).
size_t FileThreads(size_t n);

// Files cut in pieces of piece_bytes (the last one shorter; at least one a
// file), numbered together in file order so that each piece is a work item
// of its own (the job's reads and writes): file i's pieces are
// [begin(i), begin(i + 1)).
class FilePieces {
 public:
  // sizes: each file's bytes.
  FilePieces(const std::vector<uint64_t>& sizes, uint64_t piece_bytes);
  uint64_t total() const { return begin_.back(); }
  uint64_t begin(size_t i) const { return begin_[i]; }
  uint64_t count(size_t i) const { return begin_[i + 1] - begin_[i]; }
  // The file piece k (< total()) belongs to.
  size_t FileOf(uint64_t k) const;

 private:
  std::vector<uint64_t> begin_;  // size: files + 1
};

// The first failure several threads report (the pieces of one file).
class FirstFailure {
 public:
  // Keeps s if it is the first failure; OK is ignored.
  void Add(const Status& s);
  bool ok() const;
  Status status() const;

 private:
  mutable std::mutex mu_;
  Status status_;  // (under mu_)
};

// Threads for n independent pieces of CPU work (the plan's subcompaction
// ranges): at most the hardware threads and n, at least 1.
size_t ComputeThreads(size_t n);

// Calls fn(i) once for every i in [0, n), on up to `threads` threads (the
// caller is one of them; the others are HelperThreads' and join only if
// free in time), each taking the next index when done with one. Returns
// the CPU seconds the helpers used (the caller's own are in its
// ThreadCpuSeconds), so a job's CPU seconds can count them.
double ParallelFor(size_t n, size_t threads, const std::function<void(size_t)>& fn);

struct HelperShare;  // gpu_util.cc

// Calls fn(i) once for every index the caller releases, in index order of
// taking, on up to `helpers` HelperThreads asked at construction, while the
// caller goes on producing later items: Release(end) makes [0, end)
// available (end only grows). Close() stops further releases, lets the
// caller run released indices not yet taken alongside the helpers, waits
// for them and returns the helpers' CPU seconds (waiting costs none). The
// destructor closes an object not closed. With 0 helpers every index runs
// in Close.
class OrderedWorkers {
 public:
  OrderedWorkers(size_t helpers, std::function<void(size_t)> fn);
  OrderedWorkers(const OrderedWorkers&) = delete;
  OrderedWorkers& operator=(const OrderedWorkers&) = delete;
  ~OrderedWorkers();

  void Release(size_t end);
  // Runs one released index not yet taken on the calling thread; false when
  // there is none (those released are all taken). For a caller that waits
  // on the items' results: it never waits on a helper that may not come.
  bool RunOne();
  double Close();

 private:
  void Work();  // takes released indices until closed and none is left

  const std::function<void(size_t)> fn_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t next_ = 0;                     // the next index to take (under mu_)
  size_t released_ = 0;                 // indices below it may run (under mu_)
  bool closed_ = false;                 // (under mu_)
  std::shared_ptr<HelperShare> share_;  // the helpers' (may outlive this)
  const std::function<void()> work_;    // Work, what the helpers run
};

}  // namespace gpu
}  // namespace accelkv
