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

RangePlanner::RangePlanner(const CompactionJobSpec& spec, const JobInput& input,
                           const KeySortOutput& sorted, KeySortDevice* device,
                           uint64_t replan_min_bytes, uint64_t replan_window, uint64_t begin,
                           uint64_t end, OutputPlanner* planner)
    : input_(input),
      device_(device),
      replan_window_(replan_window),
      begin_(begin),
      end_(end),
      planner_(planner),
      replan_(sorted.runs != nullptr &&
              spec.compaction->max_output_file_size() >= replan_min_bytes),
      ready_(begin),
      block_end_(begin),
      table_start_(begin) {
  // The range's first table's records: the device cut each range as one
  // table from its first entry.
  if (sorted.runs != nullptr) {
    runs_end_ = sorted.runs + sorted.num_runs;
    run_ = std::lower_bound(sorted.runs, runs_end_, begin,
                            [](const BlockRun& b, uint64_t k) { return b.first < k; });
  }
}

Status RangePlanner::Plan() {
  for (uint64_t k = begin_; k < end_;) {
    const BlockRun* b = nullptr;
    Status s = AddEntry(k, &b);
    if (!s.ok()) return s;
    const uint64_t added = k++;
    if (planner_->num_tables() != tables_) {  // a table started at `added`
      tables_ = planner_->num_tables();
      s = TableStarted(added, &b);
      if (!s.ok()) return s;
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
  return Status::OK();
}

Status RangePlanner::AddEntry(uint64_t k, const BlockRun** b) {
  if (run_ != nullptr && k >= block_end_) {
    if (run_ == runs_end_ && window_cut_) {
      Status s = ReplanFrom(k, planner_->table_prefix());  // the open table's next window
      if (!s.ok()) return s;
    }
    Status s = TakeRecord(k, b);
    if (!s.ok()) return s;
    // Add reads the previous block's last key (its index entry) and
    // AddBlockRun takes this one's; a later block's is asked for now, since
    // the key arena is in input order (a miss per block).
    if (runs_end_ - run_ > kRunPrefetch) {
      __builtin_prefetch(input_.keys.key_arena + run_[kRunPrefetch].last_key_offset);
    }
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

Status RangePlanner::TableStarted(uint64_t added, const BlockRun** b) {
  if (tables_ > 1) {  // not the range's first table: the records were the previous table's
    last_table_entries_ = added - table_start_;
    *b = nullptr;
    run_ = nullptr;
    block_end_ = added;
    window_cut_ = false;
    if (replan_) {
      Status s = ReplanFrom(added, 0);
      if (!s.ok()) return s;
      s = TakeRecord(added, b);
      if (!s.ok()) return s;
    }
  }
  table_start_ = added;
  return Status::OK();
}

Status RangePlanner::ReplanFrom(uint64_t begin, uint64_t offset) {
  const auto w = std::chrono::steady_clock::now();
  uint64_t window = std::max<uint64_t>({replan_window_, 2 * last_table_entries_, 1});
  Status s;
  for (;;) {
    const uint64_t wend = end_ - begin <= window ? end_ : begin + window;
    s = device_->PlanBlocksFrom(begin, wend, offset, &replanned_);
    if (!s.ok()) break;
    window_cut_ = wend < end_;
    const size_t n = replanned_.size() - (window_cut_ ? 1 : 0);
    if (n > 0 || !window_cut_) {
      run_ = replanned_.data();
      runs_end_ = run_ + n;
      break;
    }
    window *= 2;  // one block longer than the window
  }
  replan_micros_ += MicrosSince(w);
  return s;
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
