// WorkloadResult: the measurements of one workload run on one engine, and
// their two renderings: a human-readable table and one JSON object per line
// (the --json format; docs/bench.md lists every field).
//
// Thread safety: plain data and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace accelkv_bench {

struct WorkloadResult {
  std::string engine;
  std::string workload;
  uint64_t num = 0;
  uint64_t ops = 0;           // operations performed (timed)
  bool time_limited = false;  // --time-limit stopped the workload before its ops were done
  int threads = 0;
  uint64_t key_size = 0;
  uint64_t value_size = 0;
  uint64_t seed = 0;
  bool sync = false;
  int stress_cpu = 0;
  int partitions = 1;  // instances of the engine (--partitions)

  double seconds = 0;  // timed phase
  double ops_per_sec = 0;
  double mb_per_sec = 0;  // key+value bytes moved / 2^20 per second
  double lat_us_mean = 0, lat_us_p50 = 0, lat_us_p99 = 0, lat_us_p999 = 0, lat_us_max = 0;

  uint64_t user_write_bytes = 0;  // key+value bytes the workload wrote
  uint64_t io_write_bytes = 0;    // /proc/self/io write_bytes delta (incl. compaction wait)
  bool io_available = false;
  double write_amp = 0;     // io_write_bytes / user_write_bytes (NaN when nothing was written)
  uint64_t db_bytes = 0;    // files under the engine's directory after the workload
  uint64_t live_bytes = 0;  // key+value bytes of live keys, as the bench tracks them
  double space_amp = 0;     // db_bytes / live_bytes (NaN when unknown)
  double compaction_wait_sec = 0;
  double cpu_sec = 0;          // user+sys of the process, less --stress-cpu threads
  double cpu_sec_per_mop = 0;  // cpu_sec per million ops
  // The --stress-cpu threads' own CPU over the same span: the loaded
  // server's other work, which the engine's threads compete with.
  double stress_cpu_sec = 0;
  uint64_t peak_rss_bytes = 0;

  bool verified = false;  // every checked read was right and no engine call failed
  uint64_t reads_checked = 0, reads_found = 0, reads_not_found = 0;
  std::string error;         // first failure, when !verified
  std::string engine_stats;  // the engine's own statistics text
};

std::string ResultToJson(const WorkloadResult& r, bool include_engine_stats);
// A table with one row per result.
std::string FormatTable(const std::vector<WorkloadResult>& results);

}  // namespace accelkv_bench
