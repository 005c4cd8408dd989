// SubcompactionJob: the CPU executor's work on one key range of a job
// (Compaction::subcompaction_boundaries cut the job into ranges). Opens the
// input files overlapping the range, merges them from the range's first
// user key, drops obsolete versions (ObsoleteVersionFilter), writes tables
// with TableBuilder split by OutputSplitter, and fsyncs each output before
// the next is opened. It stops at the range's end user key, so every
// version of a user key is in one range.
//
// Thread safety: one SubcompactionJob per thread; several may run at once
// on the ranges of one job (they share the spec, which is read-only, and
// the job's stop flag).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "accelkv/iterator.h"
#include "compaction/compaction_executor.h"
#include "table/table_builder.h"

namespace accelkv {

class SubcompactionJob {
 public:
  // The range is [*begin, *end) of user keys; nullptr: unbounded on that
  // side. stop (may be null) is polled while merging: once true, Run
  // returns Aborted after closing nothing more; the caller sets it when
  // another range failed. Everything referenced must outlive the job.
  SubcompactionJob(const CompactionJobSpec& spec, const std::string* begin, const std::string* end,
                   const std::atomic<bool>* stop);

  // Fills *result with this range's outputs (in key order; on error the
  // files created so far), counts, stage times and the calling thread's CPU
  // seconds. bytes_read is left 0 (the job counts its input once).
  Status Run(CompactionJobResult* result);

  // True when Run returned Aborted because of the stop flag.
  bool stopped() const { return stopped_; }

 private:
  // The merged input, positioned at the range's first entry.
  std::unique_ptr<Iterator> OpenInputs();
  bool Overlaps(const FileMetaData& f) const;
  // Runs the merge -> drop -> encode loop over the merged input.
  Status ProcessEntries(Iterator* input);
  Status OpenOutput();
  // Finish + Sync + Close of the open output; fills its FileMetaData.
  Status FinishOutput();
  // Drops the open output after an error (the file stays listed).
  void AbandonOutput();

  const CompactionJobSpec& spec_;
  const Compaction& c_;
  const std::string* const begin_;
  const std::string* const end_;
  const std::atomic<bool>* const stop_;
  CompactionJobResult* result_ = nullptr;
  bool stopped_ = false;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<TableBuilder> builder_;
  // Time spent opening and finishing outputs inside the entry loop, already
  // attributed to "encode" / "write" (excluded from the sampled split).
  uint64_t encode_ns_ = 0;
  uint64_t write_ns_ = 0;
};

}  // namespace accelkv
