#include "gpu/staging_groups.h"

#include <algorithm>
#include <cmath>

namespace accelkv {
namespace gpu {

namespace {

// A user key's place between the job's smallest and largest keys, from 0
// to 1: its first 8 bytes past their shared prefix, as a big-endian number
// (missing bytes are 0).
class KeyScale {
 public:
  KeyScale(const Slice& lo, const Slice& hi) {
    const size_t n = std::min(lo.size(), hi.size());
    while (prefix_ < n && lo[prefix_] == hi[prefix_]) ++prefix_;
    lo_ = Number(lo);
    hi_ = Number(hi);
  }
  double At(const Slice& key) const {
    if (hi_ <= lo_) return 0;
    return std::clamp((Number(key) - lo_) / (hi_ - lo_), 0.0, 1.0);
  }

 private:
  double Number(const Slice& key) const {
    uint64_t x = 0;
    for (size_t i = 0; i < 8; ++i) {
      const size_t at = prefix_ + i;
      x = (x << 8) | (at < key.size() ? static_cast<uint8_t>(key[at]) : 0u);
    }
    return static_cast<double>(x);
  }
  size_t prefix_ = 0;
  double lo_ = 0;
  double hi_ = 0;
};

}  // namespace

std::vector<std::vector<uint64_t>> StagingGroupCuts(const std::vector<TableKeySpan>& tables,
                                                    uint32_t groups, uint64_t align) {
  groups = std::max<uint32_t>(groups, 1);
  align = std::max<uint64_t>(align, 1);
  std::vector<std::vector<uint64_t>> cuts(tables.size());
  if (tables.empty()) return cuts;
  Slice lo = tables[0].smallest;
  Slice hi = tables[0].largest;
  for (const TableKeySpan& t : tables) {
    if (t.smallest.compare(lo) < 0) lo = t.smallest;
    if (t.largest.compare(hi) > 0) hi = t.largest;
  }
  const KeyScale scale(lo, hi);
  for (size_t i = 0; i < tables.size(); ++i) {
    const TableKeySpan& t = tables[i];
    const double a = scale.At(t.smallest);
    const double b = scale.At(t.largest);
    std::vector<uint64_t>& c = cuts[i];
    c.assign(groups + 1, 0);
    c[groups] = t.bytes;
    for (uint32_t g = 1; g < groups; ++g) {
      const double q = static_cast<double>(g) / groups;  // the group's start in the job's range
      double f;                                          // its start in the table's bytes
      if (b > a) {
        f = std::clamp((q - a) / (b - a), 0.0, 1.0);
      } else {
        f = q <= a ? 0.0 : 1.0;  // the table's keys all at one place
      }
      const auto at = static_cast<uint64_t>(std::floor(f * static_cast<double>(t.bytes)));
      c[g] = std::clamp(at / align * align, c[g - 1], t.bytes);
    }
  }
  return cuts;
}

void SlicePieces(const std::vector<Slice>& pieces, uint64_t lo, uint64_t hi,
                 std::vector<Slice>* out) {
  out->clear();
  uint64_t at = 0;  // the current piece's first byte
  for (const Slice& p : pieces) {
    const uint64_t end = at + p.size();
    const uint64_t from = std::max(lo, at);
    const uint64_t to = std::min(hi, end);
    if (from < to) out->emplace_back(p.data() + (from - at), to - from);
    at = end;
    if (at >= hi) break;
  }
}

}  // namespace gpu
}  // namespace accelkv
