#include "compaction/compaction.h"

#include <algorithm>
#include <cstdio>

namespace accelkv {

namespace {

// Bytes outside printable ASCII (and the backslash) as \xNN.
std::string EscapeKey(const Slice& key) {
  std::string out;
  out.reserve(key.size());
  for (char ch : key.view()) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out.append(buf);
    }
  }
  return out;
}

// True when some file of `files` (sorted by smallest key, disjoint user-key
// ranges) has a user-key range intersecting [lo, hi].
bool AnyOverlap(const Comparator* ucmp, const LevelFiles& files, const Slice& lo, const Slice& hi) {
  // The first file whose largest user key >= lo.
  auto it = std::lower_bound(files.begin(), files.end(), lo,
                             [ucmp](const FileMetaPtr& f, const Slice& k) {
                               return ucmp->Compare(f->largest.user_key(), k) < 0;
                             });
  return it != files.end() && ucmp->Compare((*it)->smallest.user_key(), hi) <= 0;
}

}  // namespace

const char* CompactionReasonName(CompactionReason reason) {
  switch (reason) {
    case CompactionReason::kLevel0FileCount:
      return "l0-file-count";
    case CompactionReason::kLevelSize:
      return "level-size";
    case CompactionReason::kManual:
      return "manual";
  }
  return "unknown";
}

Compaction::Compaction(Params params, const InternalKeyComparator* icmp)
    : p_(std::move(params)), icmp_(icmp) {
  bool first = true;
  for (const auto& list : p_.inputs) {
    for (const FileMetaPtr& f : list) {
      if (first || icmp_->Compare(f->smallest.Encode(), smallest_.Encode()) < 0) {
        smallest_ = f->smallest;
      }
      if (first || icmp_->Compare(f->largest.Encode(), largest_.Encode()) > 0) {
        largest_ = f->largest;
      }
      first = false;
    }
  }
  bottommost_ = true;
  if (!first) {
    const Comparator* ucmp = icmp_->user_comparator();
    for (const LevelFiles& files : p_.deeper_levels) {
      if (AnyOverlap(ucmp, files, smallest_.user_key(), largest_.user_key())) {
        bottommost_ = false;
        break;
      }
    }
  }
}

bool Compaction::IsTrivialMove() const {
  if (p_.reason == CompactionReason::kManual) return false;
  if (num_input_files(0) == 0 || num_input_files(1) != 0) return false;
  // Level 0 files overlap one another: only one moves at a time.
  if (p_.level == 0 && num_input_files(0) != 1) return false;
  uint64_t overlap = 0;
  for (const FileMetaPtr& f : p_.grandparents) overlap += f->file_size;
  return overlap <= p_.max_grandparent_overlap_bytes * num_input_files(0);
}

bool Compaction::IsBaseLevelForKey(const Slice& user_key) const {
  const Comparator* ucmp = icmp_->user_comparator();
  for (const LevelFiles& files : p_.deeper_levels) {
    if (AnyOverlap(ucmp, files, user_key, user_key)) return false;
  }
  return true;
}

uint64_t Compaction::TotalInputBytes() const {
  uint64_t total = 0;
  for (const auto& list : p_.inputs) {
    for (const FileMetaPtr& f : list) total += f->file_size;
  }
  return total;
}

std::string Compaction::DebugString() const {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "L%d->L%d %s: %zu+%zu files, %.1f MiB", p_.level, p_.output_level,
                CompactionReasonName(p_.reason), num_input_files(0), num_input_files(1),
                static_cast<double>(TotalInputBytes()) / (1024.0 * 1024.0));
  std::string out = buf;
  if (!smallest_.empty()) {
    out += " [" + EscapeKey(smallest_.user_key()) + " .. " + EscapeKey(largest_.user_key()) + "]";
  }
  return out;
}

OutputSplitter::OutputSplitter(const Compaction* c)
    : c_(c),
      ucmp_(c->internal_comparator() != nullptr ? c->internal_comparator()->user_comparator()
                                                : nullptr),
      bytewise_(ucmp_ != nullptr && ucmp_->IsBytewise()) {}

bool OutputSplitter::ShouldStopBefore(const Slice& internal_key, uint64_t current_output_bytes) {
  const Slice user_key = ExtractUserKey(internal_key);
  const bool same_user_key = seen_key_ && CompareUserKeys(user_key, Slice(last_user_key_)) == 0;
  if (!same_user_key) last_user_key_.assign(user_key.data(), user_key.size());
  return Decide(internal_key, same_user_key, current_output_bytes);
}

bool OutputSplitter::ShouldStopBeforeKnown(const Slice& internal_key, bool same_user_key,
                                           uint64_t current_output_bytes) {
  return Decide(internal_key, same_user_key && seen_key_, current_output_bytes);
}

bool OutputSplitter::Decide(const Slice& internal_key, bool same_user_key,
                            uint64_t current_output_bytes) {
  const std::vector<FileMetaPtr>& gp = c_->grandparents();
  while (grandparent_index_ < gp.size() &&
         CompareInternalKeys(internal_key, gp[grandparent_index_]->largest.Encode()) > 0) {
    if (seen_key_) overlapped_bytes_ += gp[grandparent_index_]->file_size;
    grandparent_index_++;
  }
  seen_key_ = true;
  if (same_user_key) return false;
  const Slice user_key = ExtractUserKey(internal_key);
  const std::vector<std::string>& bounds = c_->subcompaction_boundaries();
  if (boundary_index_ < bounds.size() &&
      CompareUserKeys(user_key, Slice(bounds[boundary_index_])) >= 0) {
    while (boundary_index_ < bounds.size() &&
           CompareUserKeys(user_key, Slice(bounds[boundary_index_])) >= 0) {
      boundary_index_++;
    }
    overlapped_bytes_ = 0;
    return true;
  }
  return StopForSize(current_output_bytes);
}

bool OutputSplitter::ShouldStopBeforeCounted(bool same_user_key, size_t grandparents_below,
                                             size_t boundaries_at_or_below,
                                             uint64_t current_output_bytes) {
  const std::vector<FileMetaPtr>& gp = c_->grandparents();
  const size_t g_end = std::min(grandparents_below, gp.size());
  for (; grandparent_index_ < g_end; ++grandparent_index_) {
    if (seen_key_) overlapped_bytes_ += gp[grandparent_index_]->file_size;
  }
  same_user_key = same_user_key && seen_key_;
  seen_key_ = true;
  if (same_user_key) return false;
  const size_t b_end = std::min(boundaries_at_or_below, c_->subcompaction_boundaries().size());
  if (boundary_index_ < b_end) {
    boundary_index_ = b_end;
    overlapped_bytes_ = 0;
    return true;
  }
  return StopForSize(current_output_bytes);
}

bool OutputSplitter::SkipCounted(size_t grandparents_below, size_t boundaries_at_or_below) {
  // With seen_key every call of the run adds its newly passed grandparents'
  // bytes; overlap only grows, so the run's last key sees the largest. Steps
  // 4 and 5 cannot stop a key when neither bound is reached at the end (a
  // key of the same user key never stops; such runs are left to the caller
  // when a bound is reached, which then decides key by key).
  if (!seen_key_) return false;
  if (boundary_index_ < std::min(boundaries_at_or_below, c_->subcompaction_boundaries().size())) {
    return false;
  }
  const std::vector<FileMetaPtr>& gp = c_->grandparents();
  const size_t g_end = std::min(grandparents_below, gp.size());
  uint64_t overlap = overlapped_bytes_;
  for (size_t g = grandparent_index_; g < g_end; ++g) overlap += gp[g]->file_size;
  if (overlap > c_->max_grandparent_overlap_bytes()) return false;
  grandparent_index_ = std::max(grandparent_index_, g_end);
  overlapped_bytes_ = overlap;
  return true;
}

bool OutputSplitter::StopForSize(uint64_t current_output_bytes) {
  if (current_output_bytes >= c_->max_output_file_size() ||
      overlapped_bytes_ > c_->max_grandparent_overlap_bytes()) {
    overlapped_bytes_ = 0;
    return true;
  }
  return false;
}

}  // namespace accelkv
