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
    // A list may be limited to the files overlapping the inputs' user-key
    // range (the picker does so): only keys in that range are ever asked.
    std::vector<LevelFiles> deeper_levels;
    uint64_t max_output_file_size = 64ull << 20;
    // An output file is closed early once it overlaps this many grandparent bytes.
    uint64_t max_grandparent_overlap_bytes = 10 * (64ull << 20);
    // Subcompaction boundaries: user keys, strictly ascending under the user
    // comparator (GenSubcompactionBoundaries, subcompaction_boundaries.h).
    // They cut the job's key space into boundaries.size() + 1 ranges
    // [b[i-1], b[i]) that an executor may run in parallel; OutputSplitter
    // closes the open output before the first key of each range, so the
    // output bytes are the same whether the ranges run apart or together.
    // Empty: one range.
    std::vector<std::string> subcompaction_boundaries;
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
  const std::vector<std::string>& subcompaction_boundaries() const {
    return p_.subcompaction_boundaries;
  }
  // The job's parameters as given (to derive a variant, e.g. with other
  // subcompaction boundaries).
  const Params& params() const { return p_; }
  const InternalKeyComparator* internal_comparator() const { return icmp_; }

  // Input files moved to the next level unchanged (LevelDB's rule, grown to
  // several files as RocksDB does): at least one input file at level() (exactly
  // one at level 0, whose files overlap), none at output_level(), and the
  // grandparent files overlapping them total <= max_grandparent_overlap_bytes
  // per moved file. A manual
  // compaction is never a trivial move: CompactRange asks for the data to be
  // rewritten (obsolete versions and tombstones dropped).
  bool IsTrivialMove() const;

  // True when no file below output_level can hold user_key (no file of
  // deeper_levels has a user-key range [smallest, largest] containing it): a
  // tombstone for it (not needed by a snapshot) may then be dropped. Pure;
  // one binary search per deeper level.
  bool IsBaseLevelForKey(const Slice& user_key) const;
  // True when nothing below output_level overlaps the inputs' user-key range
  // [smallest().user_key(), largest().user_key()] at all (computed once in
  // the constructor).
  bool IsBottommost() const { return bottommost_; }

  uint64_t TotalInputBytes() const;
  // Smallest and largest internal key over all inputs (both empty when
  // there are no inputs).
  const InternalKey& smallest() const { return smallest_; }
  const InternalKey& largest() const { return largest_; }

  // "L1->L2 manual: 3+5 files, 12.3 MiB [a .. z]": the reason is
  // CompactionReasonName, the range the smallest and largest user keys
  // (bytes outside printable ASCII written as \xNN).
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
// the key sequence, the current output sizes and the compaction, shared by
// every executor.
//
// The exact rule (a GPU executor must reproduce the split points bit for
// bit). State: grandparent index g = 0, seen_key = false, overlap = 0,
// last user key (none), boundary index b = 0. ShouldStopBefore(key,
// current_output_bytes), with B = subcompaction_boundaries():
//   1. while g < grandparents().size() and
//            icmp(key, grandparents()[g]->largest) > 0:
//        if seen_key: overlap += grandparents()[g]->file_size
//        g += 1
//   2. same_user_key = seen_key and user_key(key) == last user key;
//      seen_key = true; last user key = user_key(key)
//   3. if same_user_key: return false (versions of one user key never
//      straddle two output files, so the files of a level >= 1 have disjoint
//      user-key ranges; the split is deferred to the next user key)
//   4. if b < B.size() and ucmp(user_key(key), B[b]) >= 0:
//        advance b past every boundary <= user_key(key);
//        overlap = 0; return true (a new subcompaction range begins)
//   5. if current_output_bytes >= max_output_file_size or
//         overlap > max_grandparent_overlap_bytes:
//        overlap = 0; return true
//   6. return false
// Step 4 makes the state after the first key of a range the same as that of
// a fresh splitter fed only that range (g and b depend on the key alone,
// overlap is 0, no output is open), which is what lets the CPU executor run
// the ranges on separate threads with byte-identical output.
// The executor finishes its open output (if any) when this returns true, so
// `overlap` counts the grandparent bytes skipped over since the current
// output was opened (LevelDB's rule; the first key skips without counting).
// Executors call it only for keys they write (after ObsoleteVersionFilter),
// with current_output_bytes = TableBuilder::EstimatedFileSize() of the open
// output, or 0 when none is open.
//
// Thread safety: one job at a time.
class OutputSplitter {
 public:
  // c must outlive the splitter.
  explicit OutputSplitter(const Compaction* c);
  // Call for every key that will be written, in order, before adding it;
  // current_output_bytes is the estimated size of the open output file (0 if
  // none is open). True: finish the current output file before this key.
  bool ShouldStopBefore(const Slice& internal_key, uint64_t current_output_bytes);
  // ShouldStopBefore for a caller that already knows same_user_key (step 2):
  // whether a key was passed before and its user key equals this key's. The
  // splitter then keeps no copy of the user key, so a splitter fed this way
  // must not also be fed by ShouldStopBefore.
  bool ShouldStopBeforeKnown(const Slice& internal_key, bool same_user_key,
                             uint64_t current_output_bytes);

  // ShouldStopBeforeKnown for a caller that also knows step 1's and step
  // 4's outcome as counts: grandparents_below = the grandparent files whose
  // largest internal key is below the key, boundaries_at_or_below = the
  // subcompaction boundaries <= its user key (both lists are ascending, so
  // steps 1 and 4 stop exactly there; the GPU plan counts them by binary
  // search). Reads no key; must not be mixed with the other two calls.
  bool ShouldStopBeforeCounted(bool same_user_key, size_t grandparents_below,
                               size_t boundaries_at_or_below, uint64_t current_output_bytes);

  // ShouldStopBeforeCounted for a run of keys at once (the GPU plan's fast
  // path over a data block), each passed with current_output_bytes below
  // max_output_file_size; grandparents_below and boundaries_at_or_below are
  // the run's last key's counts (both never decrease along the keys). When
  // a key was passed before and no key of the run can stop (no boundary
  // crossed; the grandparent bytes skipped over the run keep the overlap
  // within max_grandparent_overlap_bytes), the state becomes the one those
  // calls would leave and this returns true. Else it changes nothing and
  // returns false: the caller feeds the run key by key.
  bool SkipCounted(size_t grandparents_below, size_t boundaries_at_or_below);

  // The current_output_bytes to pass to ShouldStopBefore, given an upper
  // bound of the open output's estimated size (e.g.
  // TableBuilder::EstimatedFileSizeBound) and a function computing the exact
  // estimate: exact() is called only when the bound reaches
  // max_output_file_size. ShouldStopBefore compares current_output_bytes
  // with that limit only, and exact <= bound, so the decision is the one the
  // exact estimate gives, for every key.
  template <typename ExactFn>
  uint64_t OutputBytes(uint64_t bound, ExactFn&& exact) const {
    return bound < c_->max_output_file_size() ? bound : exact();
  }

 private:
  // Steps 1 and 3 to 6 of the rule above.
  bool Decide(const Slice& internal_key, bool same_user_key, uint64_t current_output_bytes);
  // Steps 5 and 6.
  bool StopForSize(uint64_t current_output_bytes);
  int CompareUserKeys(const Slice& a, const Slice& b) const {
    return bytewise_ ? a.compare(b) : ucmp_->Compare(a, b);
  }
  // icmp->Compare(a, b) without the virtual call for a bytewise user comparator.
  int CompareInternalKeys(const Slice& a, const Slice& b) const {
    int r = CompareUserKeys(ExtractUserKey(a), ExtractUserKey(b));
    if (r == 0) {
      const uint64_t anum = ExtractTrailer(a);
      const uint64_t bnum = ExtractTrailer(b);
      r = anum > bnum ? -1 : (anum < bnum ? +1 : 0);
    }
    return r;
  }

  const Compaction* const c_;
  const Comparator* const ucmp_;
  const bool bytewise_;  // ucmp_->IsBytewise(): compare with memcmp, no virtual call
  size_t grandparent_index_ = 0;
  bool seen_key_ = false;
  uint64_t overlapped_bytes_ = 0;
  std::string last_user_key_;
  size_t boundary_index_ = 0;
};

}  // namespace accelkv
