// CompactionPicker: the leveled compaction policy, a pure function of a
// Version, the compactions already running and the compact pointers. It
// decides what to compact; DBImpl decides when and on which executor.
//
// Policy (RocksDB/LevelDB-like; docs/compaction.md):
// - Score per level (Version::compaction_score); the level with the highest
//   score >= 1 whose candidate files are free is compacted first.
// - Level 0: all L0 files overlapping the first free L0 file (transitively),
//   plus the overlapping files of L1. Only one L0 compaction runs at a time.
// - Level n >= 1: the first free file after the level's compact pointer
//   (round robin), plus the overlapping files of level n+1; the input set of
//   level n is then grown while that does not pull in more level n+1 files
//   and stays under 25 * target_file_size.
// - A compaction is refused when any of its files is an input of a running
//   compaction, or when its output range overlaps the output range of a
//   running compaction into the same level, so several compactions run at
//   once without conflicting.
// - A single input file with no overlap in the output level and small
//   grandparent overlap is a trivial move.
//
// Thread safety: stateless apart from its constant options; callers hold
// whatever lock protects the Version they pass.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "accelkv/options.h"
#include "compaction/compaction.h"
#include "util/internal_key.h"
#include "version/version.h"

namespace accelkv {

class CompactionPicker {
 public:
  // options must be sanitized and outlive the picker.
  CompactionPicker(const Options* options, const InternalKeyComparator* icmp);

  // The most urgent compaction of `version` that does not conflict with
  // `running`; nullptr when nothing needs compacting or every candidate
  // conflicts. compact_pointers[level] is an internal key (empty: start).
  // The returned compaction's new compact pointer for its level is
  // NextCompactPointer(*c).
  std::unique_ptr<Compaction> Pick(const Version& version,
                                   const std::vector<const Compaction*>& running,
                                   const std::vector<std::string>& compact_pointers) const;

  // A manual compaction of `level` into level + 1 (level 0 into 1) over the
  // internal-key range [begin, end] (nullptr: unbounded), limited to about
  // 25 * target_file_size of input per call for levels >= 1 (call again
  // with the same range until it returns nullptr, after installing the
  // result). nullptr when the level has no file in the range or one of them
  // is being compacted.
  std::unique_ptr<Compaction> PickRange(const Version& version, int level, const InternalKey* begin,
                                        const InternalKey* end,
                                        const std::vector<const Compaction*>& running) const;

  // The compact pointer to record for c's level after c is installed: its
  // largest input key.
  static std::string NextCompactPointer(const Compaction& c);

 private:
  const Options* const options_;
  const InternalKeyComparator* const icmp_;
};

}  // namespace accelkv
