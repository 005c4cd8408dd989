#include "compaction/cpu_compaction_executor.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "compaction/subcompaction_job.h"

namespace accelkv {

namespace {

// InvalidArgument unless the boundaries are strictly ascending.
Status CheckBoundaries(const Comparator* ucmp, const std::vector<std::string>& bounds) {
  for (size_t i = 1; i < bounds.size(); i++) {
    if (ucmp->Compare(Slice(bounds[i - 1]), Slice(bounds[i])) >= 0) {
      return Status::InvalidArgument(
          "compaction: subcompaction boundaries are not strictly ascending");
    }
  }
  return Status::OK();
}

}  // namespace

Status CpuCompactionExecutor::Run(const CompactionJobSpec& spec, CompactionJobResult* result) {
  *result = CompactionJobResult();
  const Compaction& c = *spec.compaction;
  result->bytes_read = c.TotalInputBytes();
  const std::vector<std::string>& bounds = c.subcompaction_boundaries();
  Status s = CheckBoundaries(spec.internal_comparator->user_comparator(), bounds);
  if (!s.ok()) return s;

  const size_t ranges = bounds.size() + 1;
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<SubcompactionJob>> jobs;
  std::vector<CompactionJobResult> parts(ranges);
  std::vector<Status> statuses(ranges);
  for (size_t r = 0; r < ranges; r++) {
    const std::string* begin = r == 0 ? nullptr : &bounds[r - 1];
    const std::string* end = r + 1 == ranges ? nullptr : &bounds[r];
    jobs.push_back(std::make_unique<SubcompactionJob>(spec, begin, end, &stop));
  }
  std::atomic<size_t> next_range{0};
  auto worker = [&] {
    for (size_t r = next_range.fetch_add(1); r < ranges; r = next_range.fetch_add(1)) {
      statuses[r] = jobs[r]->Run(&parts[r]);
      if (!statuses[r].ok()) stop.store(true, std::memory_order_relaxed);
    }
  };
  const size_t max_threads = max_threads_ > 0 ? static_cast<size_t>(max_threads_) : ranges;
  const size_t helpers = std::min(ranges, max_threads) - 1;
  std::vector<std::thread> threads;
  for (size_t t = 0; t < helpers; t++) {
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // fewer threads: the ones running (and this one) take every range
    }
  }
  worker();
  for (std::thread& t : threads) t.join();

  for (size_t r = 0; r < ranges; r++) {
    AccumulateJobResult(parts[r], result);
    if (s.ok() && !statuses[r].ok() && !jobs[r]->stopped()) s = statuses[r];
  }
  if (s.ok()) {
    // Only stopped ranges failed: impossible without a real failure, but
    // never report OK for a job with a failed range.
    for (const Status& st : statuses) {
      if (!st.ok()) return st;
    }
  }
  return s;
}

}  // namespace accelkv
