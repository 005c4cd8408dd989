#include "compaction/subcompaction_boundaries.h"

#include <algorithm>
#include <cstdint>

#include "table/table.h"
#include "util/internal_key.h"

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

// Step 3 with an offset function: adds f's bytes in each interval of
// [lo, hi) (lo < hi) to size. False, adding nothing, when its offsets
// cannot be read. keys, offsets: scratch.
bool SpreadByOffsets(const FileMetaData& f, const std::vector<std::string>& candidates, size_t lo,
                     size_t hi, const FileOffsetFn& offset_of, std::vector<Slice>* keys,
                     std::vector<uint64_t>* offsets, std::vector<uint64_t>* size) {
  keys->clear();
  for (size_t i = lo + 1; i < hi; i++) keys->emplace_back(candidates[i]);
  offsets->assign(keys->size() + 1, 0);
  if (!keys->empty() && !offset_of(f, *keys, offsets->data())) return false;
  uint64_t prev = 0;
  for (size_t i = 0; i < keys->size(); i++) {  // o(c[lo + 1 + i])
    (*offsets)[i] = prev = std::clamp((*offsets)[i], prev, f.file_size);
  }
  offsets->back() = f.file_size;  // o(c[hi])
  prev = 0;
  for (size_t i = lo; i < hi; i++) {
    const uint64_t next = (*offsets)[i - lo];
    (*size)[i] += next - prev;
    prev = next;
  }
  return true;
}

}  // namespace

FileOffsetFn TableCacheOffsets(TableCache* cache) {
  return [cache](const FileMetaData& f, const std::vector<Slice>& user_keys, uint64_t* offsets) {
    bool read = false;
    const Status s = cache->WithTable(f.number, f.file_size, [&](const Table& t) {
      // The data blocks' offset, scaled from their span to the file's size:
      // the index, filter and properties blocks after them count pro rata,
      // not all toward the file's last interval.
      const uint64_t data = t.properties().data_bytes;
      for (size_t i = 0; i < user_keys.size(); i++) {
        const InternalKey ikey(user_keys[i], kMaxSequenceNumber, kValueTypeForSeek);
        const uint64_t at = std::min(t.ApproximateOffsetOf(ikey.Encode()), data);
        offsets[i] =
            data == 0
                ? 0
                : static_cast<uint64_t>(static_cast<unsigned __int128>(at) * f.file_size / data);
      }
      read = true;
    });
    return s.ok() && read;
  };
}

std::vector<std::string> GenSubcompactionBoundaries(const Compaction::Params& params,
                                                    const Comparator* ucmp, int max_subcompactions,
                                                    const FileOffsetFn& offset_of) {
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

  // Interval sizes: from the files' offsets where they can be read, else
  // by a difference array of even per-interval shares.
  std::vector<uint64_t> size(n - 1, 0);
  std::vector<uint64_t> delta(n, 0);  // added to every interval from index on
  std::vector<uint64_t> undo(n, 0);   // subtracted from index on
  std::vector<Slice> keys;
  std::vector<uint64_t> offsets;
  for (const auto& files : params.inputs) {
    for (const FileMetaPtr& f : files) {
      size_t lo = IndexOf(candidates, ucmp, f->smallest.user_key());
      size_t hi = IndexOf(candidates, ucmp, f->largest.user_key());
      if (lo == hi) {
        lo = std::min(lo, n - 2);
        hi = lo + 1;
      } else if (offset_of &&
                 SpreadByOffsets(*f, candidates, lo, hi, offset_of, &keys, &offsets, &size)) {
        continue;
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
  if (scaled_total == 0) return boundaries;
  // Step 4: the cut nearest each target, c[i] (before interval i) or
  // c[i + 1] (after it), once interval i reaches the target.
  uint64_t sum = 0;
  size_t last = 0;        // the last cut's candidate index (0: none yet)
  uint64_t last_sum = 0;  // the scaled sum x k at the last cut
  for (size_t i = 0; i + 1 < n && boundaries.size() + 1 < k; i++) {
    const uint64_t before = (sum >> shift) * k;
    sum += size[i];
    const uint64_t after = (sum >> shift) * k;
    while (boundaries.size() + 1 < k) {
      const uint64_t target = scaled_total * (boundaries.size() + 1);
      if (after < target) break;
      // c[i] only where the range it closes holds at least half an even
      // share (total / k), so that no range is left almost empty between
      // two cuts a narrow interval apart.
      // (i > last also keeps c[0] out: last starts at 0.)
      const bool before_ok = i > last && before - last_sum >= scaled_total / 2 + scaled_total % 2;
      const bool after_ok = i + 2 < n && i + 1 > last;
      const uint64_t before_off = before > target ? before - target : target - before;
      size_t cut;
      if (before_ok && (!after_ok || before_off < after - target)) {
        cut = i;
      } else if (after_ok) {
        cut = i + 1;
      } else {
        break;
      }
      boundaries.push_back(candidates[cut]);
      last = cut;
      last_sum = cut == i ? before : after;
    }
  }
  return boundaries;
}

}  // namespace accelkv
