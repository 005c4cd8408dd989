#include "gpu/gpu_util.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "table/table_properties.h"
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
  constexpr size_t kMaxThreads = 8;
  const size_t hw = std::max<size_t>(1, std::thread::hardware_concurrency());
  return std::max<size_t>(1, std::min({n, hw, kMaxThreads}));
}

double ParallelFor(size_t n, size_t threads, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  const size_t helpers = std::min(threads, n) > 0 ? std::min(threads, n) - 1 : 0;
  std::vector<double> cpu(helpers, 0.0);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < helpers; ++t) {
    pool.emplace_back([&work, &cpu, t] {
      const double cpu0 = ThreadCpuSeconds();
      work();
      cpu[t] = ThreadCpuSeconds() - cpu0;
    });
  }
  work();
  for (std::thread& t : pool) t.join();
  double total = 0;
  for (double c : cpu) total += c;
  return total;
}

}  // namespace gpu
}  // namespace accelkv
