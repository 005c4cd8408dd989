#include "runner.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <thread>

#include "engine_factories.h"
#include "process_metrics.h"
#include "progress.h"
#include "workload.h"

namespace accelkv_bench {

namespace {

using Clock = std::chrono::steady_clock;

struct alignas(64) PaddedCounter {
  std::atomic<uint64_t> ops{0};
};

uint64_t Nanos(Clock::time_point a, Clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

double Ratio(uint64_t num, uint64_t den) {
  if (den == 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(num) / static_cast<double>(den);
}

}  // namespace

Runner::Runner(const BenchFlags& flags, std::ostream* log, const CpuStress* stress)
    : flags_(flags), log_(flags.quiet ? nullptr : log), stress_(stress) {}

uint64_t Runner::YcsbCapacity(const BenchFlags& flags) {
  uint64_t capacity = flags.num;
  for (const std::string& w : flags.workloads) {
    if (GetWorkloadInfo(w).inserts) capacity += flags.duration > 0 ? flags.num : flags.ops;
  }
  return capacity;
}

bool Runner::RunEngine(const std::string& name, std::vector<WorkloadResult>* results,
                       std::string* error) {
  std::unique_ptr<Engine> engine =
      flags_.partitions > 1 ? NewPartitionedEngine(name, flags_.partitions) : CreateEngine(name);
  if (engine == nullptr) {
    *error = "engine '" + name + "' is not built in";
    return false;
  }
  return RunEngine(name, std::move(engine), results, error);
}

bool Runner::RunEngine(const std::string& name, std::unique_ptr<Engine> engine,
                       std::vector<WorkloadResult>* results, std::string* error) {
  namespace fs = std::filesystem;
  const std::string path = flags_.db + "/" + name;
  std::error_code ec;
  fs::create_directories(flags_.db, ec);
  if (!flags_.use_existing) {
    EngineStatus s = engine->DestroyStore(path);
    if (!s.ok() && fs::exists(path)) {
      *error = name + ": cannot destroy " + path + ": " + s.message;
      return false;
    }
    fs::remove_all(path, ec);
  }
  EngineProfile profile = flags_.profile;
  profile.extra_options = flags_.EngineOptionsFor(name);
  EngineStatus s = engine->Open(path, profile);
  if (!s.ok()) {
    *error = name + ": open " + path + ": " + s.message;
    return false;
  }
  if (log_ != nullptr) {
    *log_ << "== " << name << " at " << path << ": effective options ==\n"
          << engine->EffectiveOptions() << "\n";
    log_->flush();
  }

  BenchContext ctx(flags_, engine.get(), YcsbCapacity(flags_));
  bool ok = true;
  for (const std::string& workload : flags_.workloads) {
    WorkloadResult r = RunWorkload(name, path, workload, &ctx);
    results->push_back(r);
    if (callback_) callback_(r);
    if (!r.verified) {
      *error = name + " " + workload + ": " + r.error;
      ok = false;
      break;
    }
  }
  if (flags_.print_stats && log_ != nullptr) {
    *log_ << "== " << name << " statistics ==\n" << engine->Stats() << "\n";
  }
  s = engine->Close();
  if (!s.ok() && ok) {
    *error = name + ": close: " + s.message;
    ok = false;
  }
  return ok;
}

WorkloadResult Runner::RunWorkload(const std::string& engine_name, const std::string& path,
                                   const std::string& workload, BenchContext* ctx) {
  const WorkloadInfo& info = GetWorkloadInfo(workload);
  const int threads = flags_.threads;
  const uint64_t budget = info.count_is_num ? flags_.num : flags_.ops;
  const bool timed = flags_.duration > 0;

  std::vector<std::unique_ptr<WorkloadThread>> workers;
  std::vector<uint64_t> thread_ops;
  uint64_t first = 0;
  for (int t = 0; t < threads; t++) {
    const uint64_t share = budget / threads + (static_cast<uint64_t>(t) < budget % threads ? 1 : 0);
    workers.push_back(NewWorkloadThread(workload, ctx, t, first));
    thread_ops.push_back(share);
    first += share;
  }
  std::unique_ptr<WorkloadThread> writer;
  if (info.background_writer) {
    writer = NewBackgroundWriter(ctx, ThreadSeed(flags_.seed, workload + "/writer", 0));
  }
  std::vector<ThreadStats> stats(threads);
  ThreadStats writer_stats;
  std::vector<PaddedCounter> counters(threads);

  ctx->stop.store(false);
  const IoCounters io0 = ReadIoCounters();
  const double stress0 = stress_ ? stress_->CpuSeconds() : 0.0;
  const double cpu0 = CpuSeconds() - stress0;
  ResetPeakRss();

  ProgressReporter progress(
      engine_name + " " + workload, timed ? 0 : budget, flags_.duration,
      log_ != nullptr ? flags_.progress_interval : 0,
      [&counters] {
        uint64_t sum = 0;
        for (const PaddedCounter& c : counters) sum += c.ops.load(std::memory_order_relaxed);
        return sum;
      },
      log_);

  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(flags_.duration));
  // --time-limit: a counted workload stops there, its ops not all done.
  const bool limited = !timed && flags_.time_limit > 0;
  const Clock::time_point limit = start + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(flags_.time_limit));
  std::atomic<bool> limit_hit{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; t++) {
    pool.emplace_back([&, t] {
      WorkloadThread* worker = workers[t].get();
      ThreadStats* st = &stats[t];
      Clock::time_point now = Clock::now();
      for (uint64_t i = 0;; i++) {
        if (timed ? now >= deadline : i >= thread_ops[t]) break;
        if (ctx->stop.load(std::memory_order_relaxed)) break;
        if (limited && now >= limit) {
          limit_hit.store(true, std::memory_order_relaxed);
          break;
        }
        const OpResult result = worker->Op(i, st);
        const Clock::time_point done = Clock::now();
        if (result == OpResult::kDone) break;
        st->latency.Add(Nanos(now, done));
        counters[t].ops.store(i + 1, std::memory_order_relaxed);
        now = done;
        if (result == OpResult::kFailed) break;
      }
    });
  }
  std::atomic<bool> writer_stop{false};
  std::thread writer_thread;
  if (writer != nullptr) {
    writer_thread = std::thread([&] {
      for (uint64_t i = 0; !writer_stop.load(std::memory_order_relaxed) &&
                           !ctx->stop.load(std::memory_order_relaxed);
           i++) {
        if (writer->Op(i, &writer_stats) != OpResult::kOk) break;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const Clock::time_point end = Clock::now();
  writer_stop.store(true);
  if (writer_thread.joinable()) writer_thread.join();
  progress.Stop();

  ThreadStats total;
  for (const ThreadStats& st : stats) total.Merge(st);
  total.user_write_bytes += writer_stats.user_write_bytes;

  WorkloadResult r;
  r.engine = engine_name;
  r.workload = workload;
  r.num = flags_.num;
  r.threads = threads;
  r.key_size = flags_.key_size;
  r.value_size = info.ycsb ? flags_.YcsbValueSize() : flags_.value_size;
  r.seed = flags_.seed;
  r.sync = flags_.sync;
  r.stress_cpu = flags_.stress_cpu;
  r.partitions = flags_.partitions;

  // A workload stopped by --time-limit leaves its debt unpaid: waiting for
  // it could outlast the limit many times over.
  if (info.writes && flags_.compaction_wait && !ctx->failed() && !limit_hit.load()) {
    const Clock::time_point wait_start = Clock::now();
    EngineStatus s = ctx->engine()->WaitForCompactions();
    r.compaction_wait_sec = std::chrono::duration<double>(Clock::now() - wait_start).count();
    if (!s.ok()) ctx->Fail("waiting for compactions: " + s.message);
  }
  const IoCounters io1 = ReadIoCounters();
  const double stress1 = stress_ ? stress_->CpuSeconds() : 0.0;
  const double cpu1 = CpuSeconds() - stress1;
  FinishWorkload(workload, ctx);

  r.ops = total.ops;
  r.time_limited = limit_hit.load();
  r.seconds = std::chrono::duration<double>(end - start).count();
  r.ops_per_sec = r.seconds > 0 ? static_cast<double>(r.ops) / r.seconds : 0;
  r.mb_per_sec = r.seconds > 0 ? static_cast<double>(total.bytes) / 1048576.0 / r.seconds : 0;
  r.lat_us_mean = total.latency.Mean() / 1000.0;
  r.lat_us_p50 = total.latency.Percentile(50) / 1000.0;
  r.lat_us_p99 = total.latency.Percentile(99) / 1000.0;
  r.lat_us_p999 = total.latency.Percentile(99.9) / 1000.0;
  r.lat_us_max = static_cast<double>(total.latency.max()) / 1000.0;
  r.user_write_bytes = total.user_write_bytes;
  r.io_available = io0.available && io1.available;
  r.io_write_bytes = r.io_available ? io1.write_bytes - io0.write_bytes : 0;
  r.write_amp = r.io_available ? Ratio(r.io_write_bytes, r.user_write_bytes)
                               : std::numeric_limits<double>::quiet_NaN();
  r.db_bytes = DirectoryBytes(path);
  if (!ctx->db_keys()->state()->AnyUnknown()) {
    r.live_bytes = ctx->db_keys()->LiveBytes() + ctx->ycsb_keys()->LiveBytes();
    r.space_amp = Ratio(r.db_bytes, r.live_bytes);
  } else {
    r.space_amp = std::numeric_limits<double>::quiet_NaN();
  }
  r.cpu_sec = cpu1 - cpu0;
  r.stress_cpu_sec = stress1 - stress0;
  r.cpu_sec_per_mop = r.ops > 0 ? r.cpu_sec / (static_cast<double>(r.ops) / 1e6) : 0;
  r.peak_rss_bytes = PeakRssBytes();
  r.reads_checked = total.reads_checked;
  r.reads_found = total.reads_found;
  r.reads_not_found = total.reads_not_found;
  r.verified = !ctx->failed();
  r.error = ctx->failure();
  r.engine_stats = ctx->engine()->Stats();
  return r;
}

}  // namespace accelkv_bench
