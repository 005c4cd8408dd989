// Workloads: the db_bench-style ones (fillseq ... deleterandom) and YCSB
// Load and A-F. A workload hands each worker thread a WorkloadThread whose
// Op performs one timed operation; the runner drives the loop, the clock,
// the op budget and the duration.
//
// Op budgets (count mode): fills and ycsb-load write --num keys in total;
// every other workload performs --ops operations in total; both are split
// evenly over the threads. With --duration every workload runs for that long
// instead (fills also stop when their --num keys are written).
//
// Thread safety: a WorkloadThread is used by one thread; workloads share only
// the BenchContext.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_context.h"

namespace accelkv_bench {

enum class OpResult { kOk, kDone, kFailed };

class WorkloadThread {
 public:
  virtual ~WorkloadThread() = default;
  // Performs operation number i of this thread (0-based).
  virtual OpResult Op(uint64_t i, ThreadStats* stats) = 0;
};

struct WorkloadInfo {
  std::string name;
  bool writes;             // changes the database (compaction wait, write amp)
  bool count_is_num;       // op budget is --num (fills, ycsb-load) rather than --ops
  bool ycsb;               // uses the YCSB key space
  bool background_writer;  // readwhilewriting: one extra overwrite thread
  bool inserts;            // YCSB D and E insert new records (key-space headroom)
};

// Every workload name, in the order --help lists them.
const std::vector<WorkloadInfo>& AllWorkloads();
bool IsWorkloadName(const std::string& name);
// REQUIRES: IsWorkloadName(name).
const WorkloadInfo& GetWorkloadInfo(const std::string& name);

// The worker for thread tid running workload `name`, whose share of the op
// budget starts at global operation number first_op (fills and ycsb-load
// write keys first_op, first_op + 1, ...; the runner bounds the count).
std::unique_ptr<WorkloadThread> NewWorkloadThread(const std::string& name, BenchContext* ctx,
                                                  int tid, uint64_t first_op);
// readwhilewriting's writer (uniform overwrites until the runner stops it).
std::unique_ptr<WorkloadThread> NewBackgroundWriter(BenchContext* ctx, uint64_t seed);
// Called once after a workload's threads joined (YCSB load publishes its
// record count).
void FinishWorkload(const std::string& name, BenchContext* ctx);

// Factories of the two families (workload.cc dispatches by name).
std::unique_ptr<WorkloadThread> NewDbBenchThread(const std::string& name, BenchContext* ctx,
                                                 uint64_t seed, uint64_t first_op);
std::unique_ptr<WorkloadThread> NewYcsbThread(const std::string& name, BenchContext* ctx,
                                              uint64_t seed, uint64_t first_op);

// The seed of thread tid's generators in workload `workload` of a run.
uint64_t ThreadSeed(uint64_t run_seed, const std::string& workload, int tid);

}  // namespace accelkv_bench
