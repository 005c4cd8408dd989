#include "gpu/range_planner.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>

#include "gpu/gpu_util.h"

namespace accelkv {
namespace gpu {

namespace {

// How many block records ahead a block's last key is asked for.
constexpr ptrdiff_t kRunPrefetch = 4;

}  // namespace

RangePlanner::RangePlanner(const JobInput& input, const KeySortOutput& sorted,
                           KeySortDevice* device, uint64_t begin, uint64_t end,
                           OutputPlanner* planner)
    : input_(input),
      device_(device),
      begin_(begin),
      end_(end),
      planner_(planner),
      ready_(begin),
      block_end_(begin) {
  // The range's first table's records (the device cut each range, or each
  // of its tables, from its first entry).
  if (sorted.runs != nullptr) {
    runs_end_ = sorted.runs + sorted.num_runs;
    run_ = std::lower_bound(sorted.runs, runs_end_, begin,
                            [](const BlockRun& b, uint64_t k) { return b.first < k; });
  }
  const std::vector<uint64_t>& starts = sorted.table_starts;
  if (run_ != nullptr && !starts.empty()) {
    split_ = std::upper_bound(starts.data(), starts.data() + starts.size(), begin);
    splits_end_ = std::lower_bound(split_, starts.data() + starts.size(), end);
  }
}

Status RangePlanner::Plan() {
  for (uint64_t k = begin_; k < end_;) {
    // A whole block inside the open table, where nothing is decided at
    // its entries (no device split at or inside it); else the way below.
    if (run_ != nullptr && k >= block_end_ && run_ != runs_end_ && run_->first == k &&
        run_->end <= end_ && (split_ == splits_end_ || *split_ >= run_->end)) {
      PrefetchLastKey();
      bool taken = false;
      Status s = planner_->AddWholeBlock(*run_, &taken);
      if (!s.ok()) return s;
      if (taken) {
        k = block_end_ = run_->end;
        ++run_;
        continue;
      }
    }
    const BlockRun* b = nullptr;
    Status s = AddEntry(k, &b);
    if (!s.ok()) return s;
    const uint64_t added = k++;
    if (planner_->num_tables() != tables_) {  // a table started at `added`
      const bool first = tables_ == 0;
      tables_ = planner_->num_tables();
      if (!first) {
        s = TableStarted(added, &b);
        if (!s.ok()) return s;
      }
    } else if (split_ != splits_end_ && *split_ <= added) {
      return Status::Corruption("gpu: plan: the device split a table where the CPU rule does not",
                                std::to_string(*split_));
    }
    if (b != nullptr) {  // the rest of the block at once, if AddRun would take it
      bool taken = false;
      s = planner_->AddBlockRun(*b, &taken);
      if (!s.ok()) return s;
      if (taken) k = b->end;
      block_end_ = b->end;
      continue;
    }
    // A run never reads an entry past ready_ (nor, inside a device block,
    // past it); one cut there goes on entry by entry (Add), which is the
    // same plan.
    const uint64_t limit = k < block_end_ ? std::min(ready_, block_end_) : ready_;
    k += planner_->AddRun(k, std::min(end_, limit));
  }
  if (split_ != splits_end_) {
    return Status::Corruption("gpu: plan: the device split a table where the CPU rule does not",
                              std::to_string(*split_));
  }
  return Status::OK();
}

Status RangePlanner::AddEntry(uint64_t k, const BlockRun** b) {
  if (run_ != nullptr && k >= block_end_) {
    Status s = TakeRecord(k, b);
    if (!s.ok()) return s;
    PrefetchLastKey();
    return planner_->Add(k, (*b)->head);
  }
  if (k >= ready_) {
    const auto w = std::chrono::steady_clock::now();
    Status s = device_->WaitPlan(k, &ready_);
    wait_micros_ += MicrosSince(w);
    if (!s.ok()) return s;
  }
  return planner_->Add(k);
}

void RangePlanner::PrefetchLastKey() const {
  // Add reads the previous block's last key (its index entry) and
  // AddBlockRun takes this one's; a later block's is asked for now, since
  // the key arena is in input order (a miss per block).
  if (runs_end_ - run_ > kRunPrefetch) {
    __builtin_prefetch(input_.keys.key_arena + run_[kRunPrefetch].last_key_offset);
  }
}

Status RangePlanner::TableStarted(uint64_t added, const BlockRun** b) {
  if (split_ != nullptr) {  // the device split
    if (split_ == splits_end_ || *split_ != added || *b == nullptr) {
      return Status::Corruption("gpu: plan: the CPU rule splits a table where the device did not",
                                std::to_string(added));
    }
    ++split_;
    return Status::OK();
  }
  *b = nullptr;
  run_ = nullptr;
  block_end_ = added;
  return Status::OK();
}

Status RangePlanner::TakeRecord(uint64_t k, const BlockRun** b) {
  if (run_ == runs_end_ || run_->first != k) {
    return Status::Corruption("gpu: plan: no device block record at", std::to_string(k));
  }
  *b = run_++;
  return Status::OK();
}

}  // namespace gpu
}  // namespace accelkv
