#include "version/version_builder.h"

#include <algorithm>
#include <string>

#include "version/key_debug.h"

namespace accelkv {

VersionSet::Builder::Builder(const Options* options, const InternalKeyComparator* icmp,
                             const Version* base)
    : num_levels_(options->num_levels), icmp_(icmp), levels_(options->num_levels) {
  if (base == nullptr) return;
  for (int level = 0; level < std::min(num_levels_, base->num_levels()); level++) {
    for (const FileMetaPtr& f : base->files(level)) {
      levels_[level].emplace(f->number, f);
      level_of_.emplace(f->number, level);
    }
  }
}

Status VersionSet::Builder::CheckLevel(int level, const char* what) const {
  if (level < 0 || level >= num_levels_) {
    return Status::InvalidArgument(std::string(what) + " at level " + std::to_string(level),
                                   "beyond num_levels " + std::to_string(num_levels_));
  }
  return Status::OK();
}

Status VersionSet::Builder::Apply(const VersionEdit& edit) {
  for (const auto& [level, number] : edit.deleted_files()) {
    Status s = CheckLevel(level, "removed file");
    if (!s.ok()) return s;
    if (levels_[level].erase(number) == 0) {
      return Status::Corruption("version edit removes file #" + std::to_string(number) + " from L" +
                                std::to_string(level) + ", which does not hold it");
    }
    level_of_.erase(number);
  }
  for (const auto& [level, f] : edit.new_files()) {
    Status s = CheckLevel(level, "added file");
    if (!s.ok()) return s;
    if (f.smallest.Encode().size() < kInternalKeyTrailerSize ||
        f.largest.Encode().size() < kInternalKeyTrailerSize ||
        icmp_->Compare(f.smallest.Encode(), f.largest.Encode()) > 0) {
      return Status::Corruption("version edit adds file #" + std::to_string(f.number) +
                                " with a bad key range");
    }
    if (!level_of_.emplace(f.number, level).second) {
      return Status::Corruption("version edit adds file #" + std::to_string(f.number) +
                                ", which is already live");
    }
    levels_[level].emplace(f.number, std::make_shared<const FileMetaData>(f));
  }
  return Status::OK();
}

Status VersionSet::Builder::SaveTo(std::vector<LevelFiles>* files) const {
  files->assign(num_levels_, LevelFiles());
  for (int level = 0; level < num_levels_; level++) {
    LevelFiles& out = (*files)[level];
    out.reserve(levels_[level].size());
    for (const auto& entry : levels_[level]) out.push_back(entry.second);
    if (level == 0) {
      std::sort(out.begin(), out.end(), [](const FileMetaPtr& a, const FileMetaPtr& b) {
        if (a->largest_seqno != b->largest_seqno) return a->largest_seqno > b->largest_seqno;
        return a->number > b->number;
      });
      continue;
    }
    std::sort(out.begin(), out.end(), [this](const FileMetaPtr& a, const FileMetaPtr& b) {
      const int r = icmp_->Compare(a->smallest.Encode(), b->smallest.Encode());
      return r != 0 ? r < 0 : a->number < b->number;
    });
    for (size_t i = 1; i < out.size(); i++) {
      if (icmp_->Compare(out[i - 1]->largest.Encode(), out[i]->smallest.Encode()) >= 0) {
        return Status::Corruption("overlapping files in L" + std::to_string(level) + ": #" +
                                  std::to_string(out[i - 1]->number) + " ends at " +
                                  InternalKeyDebugString(out[i - 1]->largest.Encode()) + ", #" +
                                  std::to_string(out[i]->number) + " starts at " +
                                  InternalKeyDebugString(out[i]->smallest.Encode()));
      }
    }
  }
  return Status::OK();
}

}  // namespace accelkv
