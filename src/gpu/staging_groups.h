// Staging groups (docs/GPU.md, "Staging groups"): the order in which a
// key-first job's input tables are copied to the device. The tables' low
// keys go first: group g holds, of every table, the bytes whose keys fall
// in the g-th of `groups` equal slices of the job's key range, so that the
// encode of the output's first tables (low keys) can start, and their
// copies back run, while the later groups are still being copied in
// (KeySortDevice::MarkStaged). Where a table's keys lie in its bytes is
// estimated from its smallest and largest user keys only (no index is read
// before the copies start): the keys are read as numbers (their first 8
// bytes past the prefix every key of the job shares) and taken to spread
// evenly over the table's bytes. A wrong estimate costs overlap, never
// correctness: the device gates the encode on where each value was
// actually staged.
#pragma once

#include <cstdint>
#include <vector>

#include "accelkv/slice.h"

namespace accelkv {
namespace gpu {

// One input table: its smallest and largest user keys and its bytes.
struct TableKeySpan {
  Slice smallest;
  Slice largest;
  uint64_t bytes = 0;
};

// For each table, groups + 1 ascending byte offsets from 0 to its bytes:
// group g's part of table i is [cuts[i][g], cuts[i][g + 1]). Inner cuts
// are multiples of align (> 0) or the table's ends. groups >= 1.
std::vector<std::vector<uint64_t>> StagingGroupCuts(const std::vector<TableKeySpan>& tables,
                                                    uint32_t groups, uint64_t align);

// The parts of pieces (laid end to end) that cover bytes [lo, hi) of them,
// into *out (cleared first); lo <= hi <= the pieces' total.
void SlicePieces(const std::vector<Slice>& pieces, uint64_t lo, uint64_t hi,
                 std::vector<Slice>* out);

}  // namespace gpu
}  // namespace accelkv
