// ObsoleteVersionFilter: the garbage-collection rule of compaction, shared by
// every executor (the GPU executor reimplements it bit for bit; tests compare).
//
// Fed the job's entries in internal-key order (user key ascending, sequence
// descending), it says which to keep:
// - For each user key, versions are grouped into "stripes" by the live
//   snapshots: the stripe of a sequence s is the smallest snapshot >= s (or
//   "above all snapshots"). Within a stripe only the newest version is
//   visible to anyone, so every older version in the same stripe is dropped.
// - A tombstone that is the newest of its stripe is dropped too when its
//   stripe is the oldest one (no live snapshot is older than its sequence:
//   seq <= snapshots.front(), or there are no snapshots) AND no deeper level
//   can hold the key (Compaction::IsBaseLevelForKey): then every version it
//   hides is in this job's same stripe (dropped with it) or nowhere.
// Everything else is kept, with its sequence number unchanged.
//
// Thread safety: one job at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "accelkv/comparator.h"
#include "compaction/compaction.h"
#include "util/internal_key.h"

namespace accelkv {

class ObsoleteVersionFilter {
 public:
  // snapshots: live snapshot sequences, ascending and distinct. c (outlives
  // the filter) decides IsBaseLevelForKey; nullptr (a memtable flush, which
  // cannot know what lies below) keeps every tombstone. ucmp compares user keys.
  ObsoleteVersionFilter(const Comparator* ucmp, std::vector<SequenceNumber> snapshots,
                        const Compaction* c);

  // True: write the entry; false: drop it. REQUIRES: keys arrive in
  // internal-key order (the executor parses each key first and reports
  // Corruption for one that does not parse, so only valid keys get here).
  bool Keep(const ParsedInternalKey& key);

 private:
  // The smallest snapshot >= seq, or kMaxSequenceNumber when none.
  SequenceNumber StripeOf(SequenceNumber seq) const;

  const Comparator* const ucmp_;
  const std::vector<SequenceNumber> snapshots_;
  const Compaction* const c_;
  std::string current_user_key_;
  bool has_current_user_key_ = false;
  SequenceNumber last_stripe_ = 0;
};

}  // namespace accelkv
