// DBImpl's side of compaction picking: feeds the picker (a pure policy in
// src/compaction/) with the current version, the running compactions and the
// compact pointers, and keeps the registry of running compactions that lets
// several non-conflicting compactions run at once.
#include <algorithm>

#include "db/db_impl.h"

namespace accelkv {

std::vector<const Compaction*> DBImpl::RunningCompactions() const {
  return std::vector<const Compaction*>(running_compactions_.begin(), running_compactions_.end());
}

std::unique_ptr<Compaction> DBImpl::PickCompaction() {
  std::vector<std::string> pointers(options_.num_levels);
  for (int level = 0; level < options_.num_levels; level++) {
    pointers[level] = versions_->compact_pointer(level);
  }
  return picker_->Pick(*versions_->current(), RunningCompactions(), pointers);
}

std::unique_ptr<Compaction> DBImpl::PickManualCompaction(int level, const InternalKey* begin,
                                                         const InternalKey* end) {
  return picker_->PickRange(*versions_->current(), level, begin, end, RunningCompactions());
}

void DBImpl::RegisterRunningCompaction(Compaction* c) { running_compactions_.push_back(c); }

void DBImpl::UnregisterRunningCompaction(Compaction* c) {
  auto it = std::find(running_compactions_.begin(), running_compactions_.end(), c);
  if (it != running_compactions_.end()) running_compactions_.erase(it);
}

}  // namespace accelkv
