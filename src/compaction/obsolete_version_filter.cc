#include "compaction/obsolete_version_filter.h"

#include <algorithm>
#include <utility>

namespace accelkv {

ObsoleteVersionFilter::ObsoleteVersionFilter(const Comparator* ucmp,
                                             std::vector<SequenceNumber> snapshots,
                                             const Compaction* c)
    : ucmp_(ucmp), snapshots_(std::move(snapshots)), c_(c) {}

SequenceNumber ObsoleteVersionFilter::StripeOf(SequenceNumber seq) const {
  auto it = std::lower_bound(snapshots_.begin(), snapshots_.end(), seq);
  return it == snapshots_.end() ? kMaxSequenceNumber : *it;
}

bool ObsoleteVersionFilter::Keep(const ParsedInternalKey& key) {
  const SequenceNumber stripe = StripeOf(key.sequence);
  if (has_current_user_key_ && ucmp_->Compare(key.user_key, Slice(current_user_key_)) == 0) {
    // Sequences descend within a user key, so an equal stripe means a newer
    // version of this stripe came first and hides this one from everyone.
    if (stripe == last_stripe_) return false;
  } else {
    current_user_key_.assign(key.user_key.data(), key.user_key.size());
    has_current_user_key_ = true;
  }
  last_stripe_ = stripe;
  if (key.type == ValueType::kDeletion) {
    const bool oldest_stripe = snapshots_.empty() || stripe == snapshots_.front();
    if (oldest_stripe && c_ != nullptr && c_->IsBaseLevelForKey(key.user_key)) return false;
  }
  return true;
}

}  // namespace accelkv
