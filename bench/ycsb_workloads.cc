#include "ycsb_workloads.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "distributions.h"
#include "rng.h"
#include "verified_ops.h"
#include "workload.h"

namespace accelkv_bench {

bool GetYcsbMix(const std::string& workload, YcsbMix* mix) {
  YcsbMix m;
  using D = YcsbMix::Distribution;
  if (workload == "ycsb-a") {
    m.read = 0.5;
    m.update = 0.5;
  } else if (workload == "ycsb-b") {
    m.read = 0.95;
    m.update = 0.05;
  } else if (workload == "ycsb-c") {
    m.read = 1.0;
  } else if (workload == "ycsb-d") {
    m.read = 0.95;
    m.insert = 0.05;
    m.distribution = D::kLatest;
  } else if (workload == "ycsb-e") {
    m.scan = 0.95;
    m.insert = 0.05;
  } else if (workload == "ycsb-f") {
    m.read = 0.5;
    m.read_modify_write = 0.5;
  } else {
    return false;
  }
  *mix = m;
  return true;
}

namespace {

// ycsb-load: inserts records [first, first + count) in insert order.
class YcsbLoadThread : public WorkloadThread {
 public:
  YcsbLoadThread(BenchContext* ctx, uint64_t first) : ctx_(ctx), first_(first) {}
  OpResult Op(uint64_t i, ThreadStats* stats) override {
    if (first_ + i >= ctx_->flags().num) return OpResult::kDone;
    stats->ops++;
    return VerifiedPut(ctx_, ctx_->ycsb_keys(), first_ + i, stats, &scratch_) ? OpResult::kOk
                                                                              : OpResult::kFailed;
  }

 private:
  BenchContext* ctx_;
  uint64_t first_;
  OpScratch scratch_;
};

class YcsbThread : public WorkloadThread {
 public:
  YcsbThread(const YcsbMix& mix, BenchContext* ctx, uint64_t seed)
      : mix_(mix), ctx_(ctx), space_(ctx->ycsb_keys()), rng_(seed) {
    const uint64_t records = ctx->ycsb_records.load();
    if (mix.distribution == YcsbMix::Distribution::kZipfian) {
      // CoreWorkload: expectednewkeys = opcount * insertproportion * 2.
      const uint64_t expected_new =
          static_cast<uint64_t>(static_cast<double>(ctx->flags().ops) * mix.insert * 2.0);
      zipfian_.emplace(0, records + expected_new);
    } else if (mix.distribution == YcsbMix::Distribution::kLatest) {
      latest_.emplace(records);
    }
  }

  OpResult Op(uint64_t, ThreadStats* stats) override {
    const double r = rng_.NextDouble();
    double edge = mix_.read;
    bool ok = true;
    if (r < edge) {
      ok = VerifiedGet(ctx_, space_, NextKey(), stats, &scratch_);
    } else if (r < (edge += mix_.update)) {
      ok = VerifiedPut(ctx_, space_, NextKey(), stats, &scratch_);
    } else if (r < (edge += mix_.insert)) {
      ok = Insert(stats);
    } else if (r < (edge += mix_.scan)) {
      ok = Scan(stats);
    } else {
      const uint64_t key = NextKey();
      ok = VerifiedGet(ctx_, space_, key, stats, &scratch_) &&
           VerifiedPut(ctx_, space_, key, stats, &scratch_);
    }
    stats->ops++;
    return ok ? OpResult::kOk : OpResult::kFailed;
  }

 private:
  uint64_t NextKey() {
    const uint64_t records = std::max<uint64_t>(1, ctx_->ycsb_records.load());
    switch (mix_.distribution) {
      case YcsbMix::Distribution::kLatest:
        return latest_->Next(&rng_, records);
      case YcsbMix::Distribution::kUniform:
        return rng_.Uniform(records);
      case YcsbMix::Distribution::kZipfian:
        break;
    }
    for (;;) {
      const uint64_t k = zipfian_->Next(&rng_);
      if (k < records) return k;
    }
  }

  // Inserts the next record; once the key space's headroom is used up, the
  // insert becomes an update of the newest record.
  bool Insert(ThreadStats* stats) {
    const uint64_t index = ctx_->ycsb_next_insert.fetch_add(1);
    if (index >= space_->capacity()) {
      return VerifiedPut(ctx_, space_, space_->capacity() - 1, stats, &scratch_);
    }
    if (!VerifiedPut(ctx_, space_, index, stats, &scratch_)) return false;
    ctx_->ycsb_records.fetch_add(1);
    return true;
  }

  bool Scan(ThreadStats* stats) {
    const int length = 1 + static_cast<int>(rng_.Uniform(ctx_->flags().ycsb_max_scan_length));
    space_->Key(NextKey(), &scratch_.key);
    std::unique_ptr<Cursor> cursor = ctx_->engine()->NewCursor();
    return VerifiedScan(ctx_, space_, cursor.get(), scratch_.key, length, stats);
  }

  YcsbMix mix_;
  BenchContext* ctx_;
  KeySpace* space_;
  Rng rng_;
  std::optional<ScrambledZipfianGenerator> zipfian_;
  std::optional<LatestGenerator> latest_;
  OpScratch scratch_;
};

}  // namespace

std::unique_ptr<WorkloadThread> NewYcsbThread(const std::string& name, BenchContext* ctx,
                                              uint64_t seed, uint64_t first_op) {
  if (name == "ycsb-load") return std::make_unique<YcsbLoadThread>(ctx, first_op);
  YcsbMix mix;
  if (!GetYcsbMix(name, &mix)) return nullptr;
  return std::make_unique<YcsbThread>(mix, ctx, seed);
}

}  // namespace accelkv_bench
