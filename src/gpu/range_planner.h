// The CPU plan of one subcompaction range of a device-encode job
// (docs/GPU.md, "Block plan"): drives an OutputPlanner over the range's
// kept entries, block by block from the device's block records (BlockRun)
// where it has them, entry by entry from the plan entries (WaitPlan)
// elsewhere. EncodeOutputs (device_encoder.h) runs one per range,
// each on its own thread.
//
// Thread safety: a RangePlanner is used by one thread; the device's
// WaitPlan and PlanBlocksFrom take calls from several at once.
#pragma once

#include <cstdint>
#include <vector>

#include "accelkv/status.h"
#include "gpu/key_sort_device.h"
#include "gpu/output_planner.h"

namespace accelkv {
namespace gpu {

class RangePlanner {
 public:
  // The kept entries [begin, end) of sorted into *planner. replan_min_bytes
  // and replan_window: GpuExecutorOptions::block_replan_min_bytes and
  // block_replan_window.
  RangePlanner(const CompactionJobSpec& spec, const JobInput& input, const KeySortOutput& sorted,
               KeySortDevice* device, uint64_t replan_min_bytes, uint64_t replan_window,
               uint64_t begin, uint64_t end, OutputPlanner* planner);

  // Plans the range (not Finish). Corruption when the device's records
  // disagree with the plan; a device failure as the device reports it.
  Status Plan();

  uint64_t wait_micros() const { return wait_micros_; }      // in WaitPlan
  uint64_t replan_micros() const { return replan_micros_; }  // in PlanBlocksFrom

 private:
  // Adds kept entry k: from the next record when one starts there (*b: the
  // record, its run not added), else from its plan entry (*b: nullptr).
  Status AddEntry(uint64_t k, const BlockRun** b);

  // After a table started at `added`: the records of its blocks from the
  // device when replans are on (*b: the first, whose head is `added`),
  // else none (*b: nullptr).
  Status TableStarted(uint64_t added, const BlockRun** b);

  // The open table's blocks from begin (a block start, the table's nominal
  // prefix there offset) over a window of about two tables' entries, at
  // least replan_window_: a replan over the whole rest of a range cost 4.5
  // ms a table in a database (docs/GPU.md, "Block plan"). A window's last
  // block may be cut short by its end, so it is left for the next window.
  Status ReplanFrom(uint64_t begin, uint64_t offset);

  // The next record, which must start at k (else Corruption).
  Status TakeRecord(uint64_t k, const BlockRun** b);

  const JobInput& input_;
  KeySortDevice* const device_;
  const uint64_t replan_window_;
  const uint64_t begin_;
  const uint64_t end_;
  OutputPlanner* const planner_;
  const bool replan_;              // tables starting inside the range get records (PlanBlocksFrom)
  const BlockRun* run_ = nullptr;  // the next record (nullptr: none, entry by entry)
  const BlockRun* runs_end_ = nullptr;
  std::vector<BlockRun> replanned_;  // PlanBlocksFrom's records
  bool window_cut_ = false;          // the records end before the range does
  uint64_t ready_;                   // the plan entries [begin, ready_) are on the host
  uint64_t block_end_;               // the last record's block end
  size_t tables_ = 0;                // planner_->num_tables() after the last entry
  uint64_t table_start_;
  uint64_t last_table_entries_ = 0;  // the range's previous table's
  uint64_t wait_micros_ = 0;
  uint64_t replan_micros_ = 0;
};

}  // namespace gpu
}  // namespace accelkv
