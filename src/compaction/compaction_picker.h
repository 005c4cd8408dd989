// CompactionPicker: the leveled compaction policy, a pure function of a
// Version, the compactions already running and the compact pointers. It
// decides what to compact; DBImpl decides when and on which executor.
//
// Policy (RocksDB/LevelDB-like; docs/compaction.md):
// - Score per level (Version::compaction_score); the level with the highest
//   score >= 1 whose candidate files are free is compacted first.
// - Level 0: all L0 files overlapping the oldest L0 file (transitively),
//   plus the overlapping files of L1; if that set conflicts, the same from
//   the next oldest L0 file not yet in a tried set. Only one L0 compaction
//   runs at a time.
// - Level n >= 1: the free file with the smallest overlap ratio (bytes of
//   the level n+1 files overlapping it / its own size; RocksDB's
//   kMinOverlappingRatio), ties broken round robin from the level's compact
//   pointer (the first file whose largest key is > the pointer, wrapping
//   around), plus the overlapping files of level n+1; the input set of
//   level n is then grown (LevelDB's expansion: once, to every level-n file
//   overlapping the whole input range) when that does not pull in more level
//   n+1 files and the grown inputs stay under 25 * target_file_size. The
//   last level is never compacted by score (Version gives it score 0).
// - Every compaction of level L outputs to level L + 1, with
//   max_output_file_size = target_file_size, max_grandparent_overlap_bytes =
//   10 * target_file_size, grandparents = the files of level L + 2
//   overlapping the inputs' range, deeper_levels = the files of every level
//   below L + 1 overlapping that range, subcompaction_boundaries =
//   GenSubcompactionBoundaries(inputs, Options::max_subcompactions).
// - A compaction is refused when any of its files is an input of a running
//   compaction (files compared by number), or when its output range (the
//   user-key range of all its inputs) overlaps the output range of a running
//   compaction into the same level, or when it is an L0 compaction and one is
//   running, so several compactions run at once without conflicting. The
//   picker then tries the next candidate file, then the next level.
// - Input files with no overlap in the output level and small grandparent
//   overlap (Compaction::IsTrivialMove) are a trivial move; a move out of
//   level n >= 1 grows over free neighbouring files whose range keeps no
//   overlap below, up to 25 * target_file_size (ExtendTrivialMove).
//
// Thread safety: stateless apart from its constant options; callers hold
// whatever lock protects the Version they pass.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
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
  // 25 * target_file_size of input per call for levels >= 1 (the files of
  // the range in key order up to and including the one that reaches the
  // limit; call again with the same range until it returns nullptr, after
  // installing the result). Level 0 takes every overlapping L0 file. The
  // inputs are then completed like Pick's (level + 1 files, expansion,
  // grandparents). nullptr when level is not in [0, num_levels - 2], the
  // level has no file in the range, or the compaction conflicts with
  // `running` (one of its files is being compacted, see above).
  std::unique_ptr<Compaction> PickRange(const Version& version, int level, const InternalKey* begin,
                                        const InternalKey* end,
                                        const std::vector<const Compaction*>& running) const;

  // The compact pointer to record for c's level after c is installed: the
  // largest internal key of its level() inputs (inputs(0)), encoded; empty
  // if it has none.
  static std::string NextCompactPointer(const Compaction& c);

 private:
  std::unique_ptr<Compaction> PickLevel0(const Version& version,
                                         const std::vector<const Compaction*>& running) const;
  std::unique_ptr<Compaction> PickLevelN(const Version& version, int level,
                                         const std::vector<const Compaction*>& running,
                                         const std::string& compact_pointer) const;
  // c is a trivial move of files(level)[index]: grows it over neighbouring
  // files of the level (RocksDB's TryExtendNonL0TrivialMove) while they are
  // free, the key range keeps no file in level + 1 and the moved bytes stay
  // under 25 * target_file_size, so an L1 that outgrew its target drains
  // into an empty L2 in one edit. Returns c itself when nothing joins.
  std::unique_ptr<Compaction> ExtendTrivialMove(
      const Version& version, int level, size_t index, std::unique_ptr<Compaction> c,
      const std::unordered_set<uint64_t>& busy,
      const std::vector<const Compaction*>& running) const;
  // Completes inputs0 of `level` into a compaction (level + 1 inputs,
  // expansion, grandparents, deeper levels); nullptr if it conflicts with
  // `running`.
  std::unique_ptr<Compaction> SetupCompaction(const Version& version, int level,
                                              std::vector<FileMetaPtr> inputs0,
                                              CompactionReason reason,
                                              const std::vector<const Compaction*>& running) const;

  const Options* const options_;
  const InternalKeyComparator* const icmp_;
};

}  // namespace accelkv
