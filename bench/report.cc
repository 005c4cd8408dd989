#include "report.h"

#include <cmath>
#include <cstdio>

#include "json_writer.h"

namespace accelkv_bench {

namespace {

void AddMaybe(JsonLine* j, const char* name, double v) {
  if (std::isfinite(v)) {
    j->Add(name, v);
  } else {
    j->AddNull(name);
  }
}

double Round(double v, double unit) { return std::isfinite(v) ? std::round(v / unit) * unit : v; }

}  // namespace

std::string ResultToJson(const WorkloadResult& r, bool include_engine_stats) {
  JsonLine j;
  j.Add("engine", r.engine)
      .Add("workload", r.workload)
      .Add("num", r.num)
      .Add("ops", r.ops)
      .Add("threads", r.threads)
      .Add("key_size", r.key_size)
      .Add("value_size", r.value_size)
      .Add("seed", r.seed)
      .Add("sync", r.sync)
      .Add("stress_cpu", r.stress_cpu)
      .Add("partitions", r.partitions)
      .Add("time_limited", r.time_limited)
      .Add("seconds", Round(r.seconds, 1e-6))
      .Add("ops_per_sec", Round(r.ops_per_sec, 0.1))
      .Add("mb_per_sec", Round(r.mb_per_sec, 0.001))
      .Add("lat_us_mean", Round(r.lat_us_mean, 0.001))
      .Add("lat_us_p50", Round(r.lat_us_p50, 0.001))
      .Add("lat_us_p99", Round(r.lat_us_p99, 0.001))
      .Add("lat_us_p999", Round(r.lat_us_p999, 0.001))
      .Add("lat_us_max", Round(r.lat_us_max, 0.001));
  AddMaybe(&j, "write_amp", Round(r.write_amp, 0.001));
  j.Add("io_write_bytes", r.io_write_bytes)
      .Add("user_write_bytes", r.user_write_bytes)
      .Add("io_available", r.io_available);
  AddMaybe(&j, "space_amp", Round(r.space_amp, 0.001));
  j.Add("db_bytes", r.db_bytes)
      .Add("live_bytes", r.live_bytes)
      .Add("compaction_wait_sec", Round(r.compaction_wait_sec, 1e-3))
      .Add("cpu_sec", Round(r.cpu_sec, 1e-3))
      .Add("cpu_sec_per_mop", Round(r.cpu_sec_per_mop, 1e-3))
      .Add("stress_cpu_sec", Round(r.stress_cpu_sec, 1e-3))
      .Add("peak_rss_bytes", r.peak_rss_bytes)
      .Add("verified", r.verified)
      .Add("reads_checked", r.reads_checked)
      .Add("reads_found", r.reads_found)
      .Add("reads_not_found", r.reads_not_found);
  if (!r.error.empty()) j.Add("error", r.error);
  if (include_engine_stats) j.Add("engine_stats", r.engine_stats);
  return j.str();
}

std::string FormatTable(const std::vector<WorkloadResult>& results) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%-10s %-17s %10s %12s %8s %9s %9s %9s %9s %7s %7s %9s %8s %s\n",
                "engine", "workload", "ops", "ops/s", "MB/s", "p50 us", "p99 us", "p99.9 us",
                "max us", "w-amp", "s-amp", "cpu s/Mop", "RSS MB", "verified");
  out += buf;
  auto amp = [](double v) {
    char b[32];
    if (std::isfinite(v)) {
      std::snprintf(b, sizeof(b), "%.2f", v);
    } else {
      std::snprintf(b, sizeof(b), "-");
    }
    return std::string(b);
  };
  for (const WorkloadResult& r : results) {
    std::snprintf(
        buf, sizeof(buf),
        "%-10s %-17s %9llu%c %12.0f %8.2f %9.2f %9.2f %9.2f %9.1f %7s %7s %9.2f %8.1f %s\n",
        r.engine.c_str(), r.workload.c_str(), static_cast<unsigned long long>(r.ops),
        r.time_limited ? '*' : ' ', r.ops_per_sec, r.mb_per_sec, r.lat_us_p50, r.lat_us_p99,
        r.lat_us_p999, r.lat_us_max, amp(r.write_amp).c_str(), amp(r.space_amp).c_str(),
        r.cpu_sec_per_mop, static_cast<double>(r.peak_rss_bytes) / 1048576.0,
        r.verified ? "yes" : "NO");
    out += buf;
  }
  return out;
}

}  // namespace accelkv_bench
