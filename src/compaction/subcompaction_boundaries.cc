#include "compaction/subcompaction_boundaries.h"

#include <algorithm>
#include <cstdint>

namespace accelkv {

namespace {

// Index of user_key among the sorted, distinct candidates (it is one).
size_t IndexOf(const std::vector<std::string>& candidates, const Comparator* ucmp,
               const Slice& user_key) {
  auto it = std::lower_bound(
      candidates.begin(), candidates.end(), user_key,
      [ucmp](const std::string& c, const Slice& k) { return ucmp->Compare(Slice(c), k) < 0; });
  return static_cast<size_t>(it - candidates.begin());
}

}  // namespace

std::vector<std::string> GenSubcompactionBoundaries(const Compaction::Params& params,
                                                    const Comparator* ucmp,
                                                    int max_subcompactions) {
  std::vector<std::string> boundaries;
  if (max_subcompactions <= 1) return boundaries;
  const uint64_t max_ranges =
      static_cast<uint64_t>(std::min(max_subcompactions, kMaxSubcompactions));

  std::vector<std::string> candidates;
  for (const auto& files : params.inputs) {
    for (const FileMetaPtr& f : files) {
      candidates.push_back(f->smallest.user_key().ToString());
      candidates.push_back(f->largest.user_key().ToString());
    }
  }
  auto less = [ucmp](const std::string& a, const std::string& b) {
    return ucmp->Compare(Slice(a), Slice(b)) < 0;
  };
  auto equal = [ucmp](const std::string& a, const std::string& b) {
    return ucmp->Compare(Slice(a), Slice(b)) == 0;
  };
  std::sort(candidates.begin(), candidates.end(), less);
  candidates.erase(std::unique(candidates.begin(), candidates.end(), equal), candidates.end());
  const size_t n = candidates.size();
  if (n < 2) return boundaries;

  // Interval sizes by a difference array of per-interval shares.
  std::vector<uint64_t> size(n - 1, 0);
  std::vector<uint64_t> delta(n, 0);  // added to every interval from index on
  std::vector<uint64_t> undo(n, 0);   // subtracted from index on
  for (const auto& files : params.inputs) {
    for (const FileMetaPtr& f : files) {
      size_t lo = IndexOf(candidates, ucmp, f->smallest.user_key());
      size_t hi = IndexOf(candidates, ucmp, f->largest.user_key());
      if (lo == hi) {
        lo = std::min(lo, n - 2);
        hi = lo + 1;
      }
      const uint64_t count = hi - lo;
      const uint64_t share = f->file_size / count;
      size[lo] += f->file_size % count;
      delta[lo] += share;
      undo[hi] += share;
    }
  }
  uint64_t running = 0;
  uint64_t total = 0;
  for (size_t i = 0; i + 1 < n; i++) {
    running += delta[i];
    running -= undo[i];
    size[i] += running;
    total += size[i];
  }

  const uint64_t k = std::min<uint64_t>(max_ranges, n - 1);
  // sum x k >= total x (taken + 1), in integers: bytes are scaled down
  // (the same shift on both sides) until total x k cannot overflow.
  int shift = 0;
  while ((total >> shift) > UINT64_MAX / k) shift++;
  const uint64_t scaled_total = total >> shift;
  uint64_t sum = 0;
  for (size_t i = 0; i + 2 < n && boundaries.size() + 1 < k; i++) {
    sum += size[i];
    if (scaled_total > 0 && (sum >> shift) * k >= scaled_total * (boundaries.size() + 1)) {
      boundaries.push_back(candidates[i + 1]);
    }
  }
  return boundaries;
}

}  // namespace accelkv
