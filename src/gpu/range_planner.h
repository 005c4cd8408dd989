// The CPU plan of one subcompaction range of a device-encode job
// (docs/GPU.md, "Block plan", "Table splits"): drives an OutputPlanner over
// the range's kept entries, block by block from the device's block records
// (BlockRun) where it has them, entry by entry from the plan entries
// (WaitPlan) elsewhere, and checks that its tables end where the device
// split them. EncodeOutputs (device_encoder.h) runs one per range, each on
// its own thread.
//
// Thread safety: a RangePlanner is used by one thread; the device's
// WaitPlan takes calls from several at once.
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
  // The kept entries [begin, end) of sorted into *planner.
  RangePlanner(const JobInput& input, const KeySortOutput& sorted, KeySortDevice* device,
               uint64_t begin, uint64_t end, OutputPlanner* planner);

  // Plans the range (not Finish). Corruption when the device's records or
  // table splits disagree with the plan; a device failure as the device
  // reports it.
  Status Plan();

  uint64_t wait_micros() const { return wait_micros_; }  // in WaitPlan

 private:
  // Adds kept entry k: from the next record when one starts there (*b: the
  // record, its run not added), else from its plan entry (*b: nullptr).
  Status AddEntry(uint64_t k, const BlockRun** b);

  // After a table started at `added`, not the range's first: with the
  // device's splits, checks that the device split there too (the records
  // go on: *b is the table's first); without them the records were the
  // range's first table's, so the rest goes entry by entry (*b: nullptr).
  Status TableStarted(uint64_t added, const BlockRun** b);

  // Asks for the last key of the block kRunPrefetch records after the
  // next one, ahead of its block's flush.
  void PrefetchLastKey() const;

  // The next record, which must start at k (else Corruption).
  Status TakeRecord(uint64_t k, const BlockRun** b);

  const JobInput& input_;
  KeySortDevice* const device_;
  const uint64_t begin_;
  const uint64_t end_;
  OutputPlanner* const planner_;
  const BlockRun* run_ = nullptr;  // the next record (nullptr: none, entry by entry)
  const BlockRun* runs_end_ = nullptr;
  // The device's table splits inside the range (KeySortOutput::
  // table_starts after begin), the next one first; nullptr when the device
  // did not split (else every table's blocks have records).
  const uint64_t* split_ = nullptr;
  const uint64_t* splits_end_ = nullptr;
  uint64_t ready_;      // the plan entries [begin, ready_) are on the host
  uint64_t block_end_;  // the last record's block end
  size_t tables_ = 0;   // planner_->num_tables() after the last entry
  uint64_t wait_micros_ = 0;
};

}  // namespace gpu
}  // namespace accelkv
