#include "workload.h"

#include <algorithm>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace accelkv_bench {

const std::vector<WorkloadInfo>& AllWorkloads() {
  static const std::vector<WorkloadInfo> kAll = {
      // name, writes, count_is_num, ycsb, background_writer, inserts
      {"fillseq", true, true, false, false, false},
      {"fillrandom", true, true, false, false, false},
      {"overwrite", true, false, false, false, false},
      {"readrandom", false, false, false, false, false},
      {"readseq", false, false, false, false, false},
      {"readmissing", false, false, false, false, false},
      {"seekrandom", false, false, false, false, false},
      {"readwhilewriting", true, false, false, true, false},
      {"deleterandom", true, false, false, false, false},
      {"ycsb-load", true, true, true, false, false},
      {"ycsb-a", true, false, true, false, false},
      {"ycsb-b", true, false, true, false, false},
      {"ycsb-c", false, false, true, false, false},
      {"ycsb-d", true, false, true, false, true},
      {"ycsb-e", true, false, true, false, true},
      {"ycsb-f", true, false, true, false, false},
  };
  return kAll;
}

bool IsWorkloadName(const std::string& name) {
  const auto& all = AllWorkloads();
  return std::any_of(all.begin(), all.end(), [&](const WorkloadInfo& w) { return w.name == name; });
}

const WorkloadInfo& GetWorkloadInfo(const std::string& name) {
  for (const WorkloadInfo& w : AllWorkloads()) {
    if (w.name == name) return w;
  }
  return AllWorkloads().front();
}

uint64_t ThreadSeed(uint64_t run_seed, const std::string& workload, int tid) {
  return XXH64(workload.data(), workload.size(), run_seed) ^
         (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(tid + 1));
}

std::unique_ptr<WorkloadThread> NewWorkloadThread(const std::string& name, BenchContext* ctx,
                                                  int tid, uint64_t first_op) {
  const uint64_t seed = ThreadSeed(ctx->flags().seed, name, tid);
  if (GetWorkloadInfo(name).ycsb) return NewYcsbThread(name, ctx, seed, first_op);
  return NewDbBenchThread(name, ctx, seed, first_op);
}

std::unique_ptr<WorkloadThread> NewBackgroundWriter(BenchContext* ctx, uint64_t seed) {
  return NewDbBenchThread("overwrite", ctx, seed, 0);
}

void FinishWorkload(const std::string& name, BenchContext* ctx) {
  if (name == "ycsb-load") {
    const uint64_t loaded = ctx->flags().num;
    ctx->ycsb_records.store(std::max(ctx->ycsb_records.load(), loaded));
    ctx->ycsb_next_insert.store(std::max(ctx->ycsb_next_insert.load(), loaded));
  }
}

}  // namespace accelkv_bench
