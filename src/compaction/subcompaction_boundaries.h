// GenSubcompactionBoundaries: cuts a compaction's key space into up to
// max_subcompactions ranges of about equal input bytes, from the input
// files' metadata alone (RocksDB's GenSubcompactionBoundaries, with file
// sizes standing in for its ApproximateSize), so the boundaries, and with
// them the output bytes (OutputSplitter closes an output at each boundary),
// are a pure function of the job.
//
// The rule:
//   1. max_subcompactions <= 1, or fewer than two distinct candidate keys:
//      no boundary.
//   2. Candidates: the smallest and largest user key of every input file
//      (both levels), sorted by the user comparator, duplicates removed:
//      c[0] < c[1] < ... < c[n-1]. Interval i is [c[i], c[i+1]].
//   3. Each file's file_size is spread evenly (integer division, the
//      remainder to its first interval) over the intervals its user-key
//      range covers; a file of a single user key c[j] counts toward
//      interval min(j, n - 2).
//   4. With total = the sum of all interval sizes and
//      k = min(max_subcompactions, kMaxSubcompactions, n - 1), walk the
//      intervals in order with a running sum; after interval i (i < n - 2),
//      if fewer than k - 1 boundaries were taken and the running sum x k >=
//      total x (boundaries taken + 1), take c[i + 1]. (Integer arithmetic;
//      byte counts are shifted right together if total x k would overflow.)
// Boundaries are user keys of input files, strictly ascending, each
// > c[0] and < c[n-1], so no range is empty of candidates and a boundary
// never separates versions of one user key (ranges are [b[i-1], b[i]) of
// user keys).
//
// Thread safety: a pure function.
#pragma once

#include <string>
#include <vector>

#include "accelkv/comparator.h"
#include "compaction/compaction.h"

namespace accelkv {

// The largest max_subcompactions the function honours (larger is clamped).
inline constexpr int kMaxSubcompactions = 256;

std::vector<std::string> GenSubcompactionBoundaries(const Compaction::Params& params,
                                                    const Comparator* ucmp, int max_subcompactions);

}  // namespace accelkv
