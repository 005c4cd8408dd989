// VersionSet::Builder: applies a sequence of VersionEdits to a base
// version's file lists and produces the file lists of the resulting version.
// Private to VersionSet (LogAndApply applies one edit to current(); Recover
// applies a whole MANIFEST to an empty base).
//
// Rules: within an edit, removals apply before additions (so a file may move
// levels: remove from L, add to L + 1). Removing a file that is not in that
// level, adding a file number that is already present, a file whose
// smallest key is above its largest, or files of a level >= 1 that overlap
// (internal-key ranges) are Corruption; a level >= num_levels is
// InvalidArgument (a database created with more levels).
//
// Thread safety: none; used by one thread (under the DB mutex).
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "accelkv/options.h"
#include "accelkv/status.h"
#include "version/file_meta.h"
#include "version/version.h"
#include "version/version_edit.h"
#include "version/version_set.h"

namespace accelkv {

class VersionSet::Builder {
 public:
  // base may be nullptr (empty). base must outlive the Builder.
  Builder(const Options* options, const InternalKeyComparator* icmp, const Version* base);

  // Applies the file changes of edit (its counters and compact pointers are
  // the caller's business). On error the builder's state is unspecified.
  Status Apply(const VersionEdit& edit);

  // The resulting file lists, num_levels of them, ordered as Version wants:
  // L0 newest first (largest_seqno, then number, descending), levels >= 1
  // by smallest key. Corruption if files of a level >= 1 overlap.
  Status SaveTo(std::vector<LevelFiles>* files) const;

 private:
  Status CheckLevel(int level, const char* what) const;

  const int num_levels_;
  const InternalKeyComparator* const icmp_;
  std::vector<std::map<uint64_t, FileMetaPtr>> levels_;  // number -> file
  std::unordered_map<uint64_t, int> level_of_;           // number -> level
};

}  // namespace accelkv
