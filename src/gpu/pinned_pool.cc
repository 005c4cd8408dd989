#include "gpu/pinned_pool.h"

#include <algorithm>
#include <cstddef>

namespace accelkv {
namespace gpu {

PinnedPool::~PinnedPool() {
  std::lock_guard<std::mutex> l(mu_);
  for (const Region& r : free_) Unmap(r);
  free_.clear();
}

void PinnedPool::Unmap(Region region) { memory_.unmap(region.p, region.bytes); }

PinnedPool::Region PinnedPool::PopFree(std::vector<Region>::iterator it) {
  const Region r = *it;
  stats_.free_bytes -= r.bytes;
  *it = free_.back();
  free_.pop_back();
  return r;
}

void PinnedPool::AddInUse(uint64_t bytes) {
  in_use_ += bytes;
  peak_in_use_ = std::max(peak_in_use_, in_use_);
}

void PinnedPool::EvictFreeOver(uint64_t limit, size_t below, std::vector<Region>* unmap) {
  const auto evict = [&](std::vector<Region>::iterator it) {
    unmap->push_back(PopFree(it));
    stats_.pinned_bytes -= unmap->back().bytes;
  };
  // The largest free region under `below` first: a buffer that grows past
  // its region leaves it behind, and no other buffer is likely to fit it.
  while (stats_.pinned_bytes > limit) {
    auto it = free_.end();
    for (auto f = free_.begin(); f != free_.end(); ++f) {
      if (f->bytes < below && (it == free_.end() || f->bytes > it->bytes)) it = f;
    }
    if (it == free_.end()) break;
    evict(it);
  }
  while (stats_.pinned_bytes > limit && !free_.empty()) {
    evict(std::min_element(free_.begin(), free_.end(),
                           [](const Region& a, const Region& b) { return a.bytes < b.bytes; }));
  }
}

size_t PinnedPool::BestFit(size_t bytes) const {
  size_t best = free_.size();
  for (size_t i = 0; i < free_.size(); ++i) {
    const size_t b = free_[i].bytes;
    if (b < bytes || (b > kSmallRegion && b / kMaxSlack > bytes)) continue;
    if (best == free_.size() || b < free_[best].bytes) best = i;
  }
  return best;
}

PinnedPool::Region PinnedPool::Take(size_t min_bytes, size_t want_bytes) {
  want_bytes = std::max(want_bytes, min_bytes);
  std::vector<Region> unmap;
  {
    std::lock_guard<std::mutex> l(mu_);
    // A region of the size wanted first (a buffer's own size, so its
    // region of the last job), then one of the size needed.
    size_t best = BestFit(want_bytes);
    if (best == free_.size()) best = BestFit(min_bytes);
    if (best < free_.size()) {
      const Region r = PopFree(free_.begin() + static_cast<std::ptrdiff_t>(best));
      AddInUse(r.bytes);
      return r;
    }
    // None fits: free regions make room for the new one (first those too
    // small for it, largest first), so that what is mapped stays within
    // the busiest moment's bytes, this one included.
    EvictFreeOver(std::max<uint64_t>(peak_in_use_, in_use_ + want_bytes) - want_bytes, min_bytes,
                  &unmap);
  }
  for (const Region& e : unmap) Unmap(e);
  // Mapped outside the lock: pinning a large region takes milliseconds.
  Region r{memory_.map(want_bytes), want_bytes};
  if (r.p == nullptr && want_bytes > min_bytes) r = Region{memory_.map(min_bytes), min_bytes};
  if (r.p == nullptr) return Region{};
  std::lock_guard<std::mutex> l(mu_);
  AddInUse(r.bytes);
  stats_.maps++;
  stats_.mapped_bytes += r.bytes;
  stats_.pinned_bytes += r.bytes;
  stats_.peak_pinned_bytes = std::max(stats_.peak_pinned_bytes, stats_.pinned_bytes);
  return r;
}

void PinnedPool::Give(Region region) {
  if (region.p == nullptr) return;
  std::vector<Region> unmap;
  {
    std::lock_guard<std::mutex> l(mu_);
    in_use_ -= region.bytes;
    free_.push_back(region);
    stats_.free_bytes += region.bytes;
    // Over the busiest moment's bytes: the smallest free regions go first
    // (those a grown buffer left behind), so the one given back, the size
    // its buffer has now, most likely stays.
    EvictFreeOver(peak_in_use_, 0, &unmap);
  }
  for (const Region& r : unmap) Unmap(r);  // outside the lock, as the map
}

void PinnedPool::Attach() {
  std::lock_guard<std::mutex> l(mu_);
  users_++;
}

void PinnedPool::Detach() {
  std::vector<Region> unmap;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (--users_ > 0) return;
    unmap.swap(free_);
    stats_.pinned_bytes -= stats_.free_bytes;
    stats_.free_bytes = 0;
    peak_in_use_ = in_use_;  // a later user starts afresh
  }
  for (const Region& r : unmap) Unmap(r);
}

PinnedPool::Stats PinnedPool::GetStats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

}  // namespace gpu
}  // namespace accelkv
