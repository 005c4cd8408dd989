// Compaction: one unit of compaction work as the picker chose it: the input
// files of level() and output_level(), and everything the executor needs to
// produce output bytes that depend only on the job (the grandparent files
// that decide output splits, the deeper levels that decide whether a
// tombstone may be dropped). It holds no reference to a Version or the DB, so
// it can be used without the DB mutex.
//
// Thread safety: immutable after construction; safe to read from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "accelkv/options.h"
#include "util/internal_key.h"
#include "version/file_meta.h"

namespace accelkv {

enum class CompactionReason {
  kLevel0FileCount,  // L0 score (file count) >= 1
  kLevelSize,        // level bytes above target
  kManual,           // CompactRange
};
const char* CompactionReasonName(CompactionReason reason);

class Compaction {
 public:
  struct Params {
    int level = 0;
    int output_level = 1;
    CompactionReason reason = CompactionReason::kLevelSize;
    std::vector<FileMetaPtr> inputs[2];     // [0]: level, [1]: output_level
    std::vector<FileMetaPtr> grandparents;  // files of output_level + 1 overlapping the inputs
    // Files of every level below output_level (index 0 is output_level + 1),
    // each list sorted by smallest key: the evidence for IsBaseLevelForKey.
    std::vector<LevelFiles> deeper_levels;
    uint64_t max_output_file_size = 64ull << 20;
    // An output file is closed early once it overlaps this many grandparent bytes.
    uint64_t max_grandparent_overlap_bytes = 10 * (64ull << 20);
  };

  Compaction(Params params, const InternalKeyComparator* icmp);

  int level() const { return p_.level; }
  int output_level() const { return p_.output_level; }
  CompactionReason reason() const { return p_.reason; }
  const std::vector<FileMetaPtr>& inputs(int which) const { return p_.inputs[which]; }
  const FileMetaPtr& input(int which, size_t i) const { return p_.inputs[which][i]; }
  size_t num_input_files(int which) const { return p_.inputs[which].size(); }
  const std::vector<FileMetaPtr>& grandparents() const { return p_.grandparents; }
  uint64_t max_output_file_size() const { return p_.max_output_file_size; }
  uint64_t max_grandparent_overlap_bytes() const { return p_.max_grandparent_overlap_bytes; }
  const InternalKeyComparator* internal_comparator() const { return icmp_; }

  // One input file moved to the next level unchanged: nothing in
  // output_level overlaps it and its grandparent overlap is small.
  bool IsTrivialMove() const;

  // True when no file below output_level can hold user_key: a tombstone for
  // it (not needed by a snapshot) may then be dropped. Pure.
  bool IsBaseLevelForKey(const Slice& user_key) const;
  // True when nothing below output_level overlaps the inputs at all.
  bool IsBottommost() const { return bottommost_; }

  uint64_t TotalInputBytes() const;
  // Smallest and largest internal key over all inputs.
  const InternalKey& smallest() const { return smallest_; }
  const InternalKey& largest() const { return largest_; }

  // "L1->L2 manual: 3+5 files, 12.3 MiB [a .. z]"
  std::string DebugString() const;

 private:
  const Params p_;
  const InternalKeyComparator* const icmp_;
  InternalKey smallest_, largest_;
  bool bottommost_ = false;
};

// Decides where compaction output is split into files: before a key when the
// current output reached max_output_file_size, or when it overlaps more than
// max_grandparent_overlap_bytes of grandparent files (LevelDB's rule), so
// that a later compaction of one output file stays small. A pure function of
// the key sequence and the compaction, shared by every executor.
//
// Thread safety: one job at a time.
class OutputSplitter {
 public:
  explicit OutputSplitter(const Compaction* c);
  // Call for every key that will be written, in order, before adding it;
  // current_output_bytes is the estimated size of the open output file (0 if
  // none is open). True: finish the current output file before this key.
  bool ShouldStopBefore(const Slice& internal_key, uint64_t current_output_bytes);

 private:
  const Compaction* const c_;
  size_t grandparent_index_ = 0;
  bool seen_key_ = false;
  uint64_t overlapped_bytes_ = 0;
};

}  // namespace accelkv
