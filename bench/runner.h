// Runner: runs the flags' workloads, in order, on one engine's database
// (flags.db + "/" + engine), measuring each (report.h) and verifying every
// read. A wrong value, a missing key or an engine error ends the engine's
// run: its result has verified=false and RunEngine returns false.
//
// Measurement window of a workload: the timed phase (all worker threads),
// then, for workloads that write and with --compaction-wait, an untimed
// WaitForCompactions whose I/O and CPU still count toward write_amp and
// cpu_sec (the compaction debt the workload created is its cost).
//
// Thread safety: one Runner is used by one thread; it starts and joins its
// worker, writer and progress threads inside RunEngine.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "bench_context.h"
#include "cpu_stress.h"
#include "engine.h"
#include "flags.h"
#include "report.h"

namespace accelkv_bench {

class Runner {
 public:
  // log: progress lines, option dumps (nothing when flags.quiet); stress:
  // the run's CPU stress threads (their CPU is left out of cpu_sec), or null.
  Runner(const BenchFlags& flags, std::ostream* log, const CpuStress* stress);

  // Called with each result as soon as its workload ends.
  void SetResultCallback(std::function<void(const WorkloadResult&)> callback) {
    callback_ = std::move(callback);
  }

  // Creates engine `name` and runs every workload on it.
  bool RunEngine(const std::string& name, std::vector<WorkloadResult>* results, std::string* error);
  // The same with an engine the caller made (tests wrap engines to inject
  // faults); `name` labels results and the database directory.
  bool RunEngine(const std::string& name, std::unique_ptr<Engine> engine,
                 std::vector<WorkloadResult>* results, std::string* error);

  // Headroom of the YCSB key space: --num plus room for every insert the
  // workload list may make.
  static uint64_t YcsbCapacity(const BenchFlags& flags);

 private:
  WorkloadResult RunWorkload(const std::string& engine_name, const std::string& path,
                             const std::string& workload, BenchContext* ctx);

  const BenchFlags& flags_;
  std::ostream* log_;
  const CpuStress* stress_;
  std::function<void(const WorkloadResult&)> callback_;
};

}  // namespace accelkv_bench
