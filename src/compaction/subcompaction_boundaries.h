// GenSubcompactionBoundaries: cuts a compaction's key space into up to
// max_subcompactions ranges of about equal input bytes (RocksDB's
// GenSubcompactionBoundaries), so that the ranges, each run on its own
// thread by the CPU executor, take about equal time. The boundaries, and
// with them the output bytes (OutputSplitter closes an output at each
// boundary), are a pure function of the job and, where given, of its
// input files' indexes.
//
// The rule:
//   1. max_subcompactions <= 1, or fewer than two distinct candidate keys:
//      no boundary.
//   2. Candidates: the smallest and largest user key of every input file
//      (both levels), sorted by the user comparator, duplicates removed:
//      c[0] < c[1] < ... < c[n-1]. Interval i is [c[i], c[i+1]].
//   3. Each file's file_size is spread over the intervals its user-key
//      range covers, c[lo] to c[hi]:
//      - with an offset function (RocksDB's ApproximateSize: the file's
//        index, Table::ApproximateOffsetOf), interval i gets o(c[i+1]) -
//        o(c[i]), where o(c[lo]) = 0, o(c[hi]) = file_size and in between
//        o is the function's offset of the first data block that may hold
//        the user key, clamped to be non-decreasing and at most file_size.
//        A file whose offsets cannot be read is spread as without one;
//      - without one, evenly (integer division, the remainder to its first
//        interval), from the metadata alone. This assumes the file's bytes
//        are spread evenly over the intervals, which they are not where the
//        candidates cluster: a narrow interval (between the ends of several
//        level-0 files, or between two adjacent lower-level files) gets as
//        much of each file over it as a whole lower-level file's interval
//        (in the compact benchmark, whose level-0 files' ends cluster at
//        both ends of the key space, two of 16 ranges held twice the
//        average and two almost nothing).
//      A file of a single user key c[j] counts toward interval
//      min(j, n - 2).
//   4. With total = the sum of all interval sizes (none when 0) and
//      k = min(max_subcompactions, kMaxSubcompactions, n - 1), walk the
//      intervals in order with a running sum. While fewer than k - 1
//      boundaries were taken and the sum after interval i, x k, reaches
//      the target total x (boundaries taken + 1), take the cut nearer the
//      target of c[i] (the sum before interval i; only for i >= 1, past
//      the last cut taken, and where the range it closes holds at least
//      half of total / k) and c[i + 1] (the sum after it; only for
//      i + 1 <= n - 2 and past the last cut), c[i + 1] on a tie or when
//      c[i] cannot be taken; stop trying at interval i when neither can.
//      A cut at c[i] can be followed by one at c[i + 1] for the next
//      target. (Integer arithmetic; byte counts are shifted right together
//      if total x k would overflow.) Taking the first cut that reaches the
//      target instead left a range of two files' bytes at the start and an
//      almost empty one at the end where the intervals were files of equal
//      size: the sum after the first file fell short of its target by the
//      bytes of the upper level's files beyond the lower level's range.
// Boundaries are user keys of input files, strictly ascending, each
// > c[0] and < c[n-1], so no range is empty of candidates and a boundary
// never separates versions of one user key (ranges are [b[i-1], b[i]) of
// user keys).
//
// Thread safety: a pure function (the offset function is called from the
// calling thread only).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "accelkv/comparator.h"
#include "compaction/compaction.h"
#include "table/table_cache.h"

namespace accelkv {

// The largest max_subcompactions the function honours (larger is clamped).
inline constexpr int kMaxSubcompactions = 256;

// For each of user_keys (ascending, within f's user-key range), the offset
// in file f of the first data block that may hold it, into offsets[i] (the
// caller sizes it to user_keys.size()); false when they cannot be read
// (step 3 then spreads f evenly). One call per file, so that an index is
// looked up once for all of the file's candidates.
using FileOffsetFn = std::function<bool(const FileMetaData& f, const std::vector<Slice>& user_keys,
                                        uint64_t* offsets)>;

std::vector<std::string> GenSubcompactionBoundaries(const Compaction::Params& params,
                                                    const Comparator* ucmp, int max_subcompactions,
                                                    const FileOffsetFn& offset_of = nullptr);

// A FileOffsetFn over a table cache: Table::ApproximateOffsetOf of the key
// with the largest sequence number, scaled from the data blocks' span
// (TableProperties::data_bytes) to the file's size, so that the index,
// filter and properties blocks count pro rata. For the database's jobs.
FileOffsetFn TableCacheOffsets(TableCache* cache);

}  // namespace accelkv
