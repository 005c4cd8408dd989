#include "gpu/gpu_util.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "compaction/compaction_executor.h"
#include "table/table_properties.h"
#include "util/helper_threads.h"
#include "util/thread_cpu.h"
#include "version/file_meta.h"

namespace accelkv {
namespace gpu {

FileMetaData OutputFileMeta(uint64_t number, uint64_t file_size, const TableProperties& props) {
  FileMetaData meta;
  meta.number = number;
  SetFromTableProperties(props, file_size, &meta);
  return meta;
}

size_t FileThreads(size_t n) {
  // 16, not 8: on the H100 machine (16 cores, virtio disk) a 198 MB job
  // from disk ran 228-246 ms on 16 threads against 285-288 ms on 8 (reads
  // and writes both faster), in memory within noise
  // (bench/results/2026-11-24-h100-file-threads.md).
  constexpr size_t kMaxThreads = 16;
  const size_t hw = std::max<size_t>(1, std::thread::hardware_concurrency());
  return std::max<size_t>(1, std::min({n, hw, kMaxThreads}));
}

FilePieces::FilePieces(const std::vector<uint64_t>& sizes, uint64_t piece_bytes)
    : begin_(sizes.size() + 1, 0) {
  for (size_t i = 0; i < sizes.size(); ++i) {
    begin_[i + 1] = begin_[i] + std::max<uint64_t>(1, (sizes[i] + piece_bytes - 1) / piece_bytes);
  }
}

size_t FilePieces::FileOf(uint64_t k) const {
  return static_cast<size_t>(std::upper_bound(begin_.begin(), begin_.end(), k) - begin_.begin() -
                             1);
}

void FirstFailure::Add(const Status& s) {
  if (s.ok()) return;
  std::lock_guard<std::mutex> l(mu_);
  if (status_.ok()) status_ = s;
}

bool FirstFailure::ok() const {
  std::lock_guard<std::mutex> l(mu_);
  return status_.ok();
}

Status FirstFailure::status() const {
  std::lock_guard<std::mutex> l(mu_);
  return status_;
}

size_t ComputeThreads(size_t n) {
  const size_t hw = std::max<size_t>(1, std::thread::hardware_concurrency());
  return std::max<size_t>(1, std::min(n, hw));
}

// What a ParallelFor or OrderedWorkers shares with its helper tasks, which
// may start after the call has returned (HelperThreads runs them when a
// thread is free): such a late task finds no work left and leaves, touching
// only this. The caller waits for every task that took work (running_).
struct HelperShare {
  std::mutex mu;
  std::condition_variable cv;
  bool open = true;  // a task may still join (under mu)
  int running = 0;   // tasks that joined and have not finished (under mu)
  double cpu = 0;    // CPU seconds of the finished tasks (under mu)

  // Joins unless the work is over; the task then runs and calls Leave.
  bool Join() {
    std::lock_guard<std::mutex> l(mu);
    if (!open) return false;
    ++running;
    return true;
  }
  void Leave(double cpu_seconds) {
    {
      std::lock_guard<std::mutex> l(mu);
      --running;
      cpu += cpu_seconds;
    }
    cv.notify_all();
  }
  // No task joins from now on; waits for those that did. Their CPU seconds.
  double CloseAndWait() {
    std::unique_lock<std::mutex> l(mu);
    open = false;
    cv.wait(l, [this] { return running == 0; });
    return cpu;
  }
};

namespace {
thread_local CpuStageScope* current_cpu_scope = nullptr;
}  // namespace

CpuStageScope::CpuStageScope(CompactionJobResult* result, const char* stage)
    : result_(result), stage_(stage), start_(ThreadCpuSeconds()), parent_(current_cpu_scope) {
  current_cpu_scope = this;
}

double CpuStageScope::End() {
  if (ended_) return 0;
  ended_ = true;
  const double used = ThreadCpuSeconds() - start_;
  result_->stage_cpu_seconds[stage_] += std::max(0.0, used - nested_) + helper_seconds_;
  result_->cpu_seconds += helper_seconds_;
  if (parent_ != nullptr) parent_->nested_ += used;
  current_cpu_scope = parent_;
  return used;
}

namespace {

// Starts `helpers` tasks on HelperThreads, each running body() if it joins
// share in time, timing its CPU seconds.
void StartHelpers(size_t helpers, const std::shared_ptr<HelperShare>& share,
                  const std::function<void()>& body) {
  for (size_t t = 0; t < helpers; ++t) {
    // body is the caller's, valid while a joined task runs (the caller
    // waits for those); a task that does not join never calls it.
    const bool started = HelperThreads::Get()->Run([share, &body] {
      if (!share->Join()) return;
      const double cpu0 = ThreadCpuSeconds();
      body();
      share->Leave(ThreadCpuSeconds() - cpu0);
    });
    if (!started) break;  // no thread: the caller does the rest
  }
}

}  // namespace

double ParallelFor(size_t n, size_t threads, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  const std::function<void()> work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  const size_t helpers = std::min(threads, n) > 0 ? std::min(threads, n) - 1 : 0;
  if (helpers == 0) {
    work();
    return 0;
  }
  const auto share = std::make_shared<HelperShare>();
  StartHelpers(helpers, share, work);
  work();
  return share->CloseAndWait();
}

OrderedWorkers::OrderedWorkers(size_t helpers, std::function<void(size_t)> fn)
    : fn_(std::move(fn)), share_(std::make_shared<HelperShare>()), work_([this] { Work(); }) {
  StartHelpers(helpers, share_, work_);
}

OrderedWorkers::~OrderedWorkers() { Close(); }

void OrderedWorkers::Release(size_t end) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_ || end <= released_) return;
    released_ = end;
  }
  cv_.notify_all();
}

void OrderedWorkers::Work() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [this] { return next_ < released_ || closed_; });
    if (next_ >= released_) return;  // closed, nothing left
    const size_t i = next_++;
    l.unlock();
    fn_(i);
    l.lock();
  }
}

bool OrderedWorkers::RunOne() {
  size_t i = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (next_ >= released_) return false;
    i = next_++;
  }
  fn_(i);
  return true;
}

double OrderedWorkers::Close() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return 0;
    closed_ = true;
  }
  cv_.notify_all();
  Work();
  return share_->CloseAndWait();
}

}  // namespace gpu
}  // namespace accelkv
