// Version: an immutable snapshot of which table files make up each level.
// A VersionSet owns the chain of versions; readers and iterators pin one by
// reference count so the files it names stay alive while they use it.
//
// Level 0: files may overlap; ordered newest first (file_meta.h). Levels >= 1:
// files sorted by smallest key and non-overlapping.
//
// Thread safety: the file lists are immutable after construction, so reads
// (Get, MultiGet, AddIterators, the accessors) are safe from any thread.
// Ref/Unref REQUIRE the DB mutex (the count is a plain int).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "accelkv/iterator.h"
#include "accelkv/options.h"
#include "accelkv/status.h"
#include "table/table_cache.h"
#include "util/internal_key.h"
#include "version/file_meta.h"

namespace accelkv {

class VersionSet;

// Target bytes of `level` (>= 1): max_bytes_for_level_base for level 1, times
// max_bytes_for_level_multiplier for each level below it.
uint64_t MaxBytesForLevel(const Options& options, int level);

class Version {
 public:
  // A version holding `files` (exactly options->num_levels lists, each ordered
  // as described above). Computes the compaction scores. table_cache may be
  // nullptr for a version that is never read (picker tests). The reference
  // count starts at 0.
  Version(const Options* options, const InternalKeyComparator* icmp, TableCache* table_cache,
          std::vector<LevelFiles> files);
  Version(const Version&) = delete;
  Version& operator=(const Version&) = delete;

  // REQUIRES: the DB mutex. The last Unref deletes the version (and first
  // removes it from the VersionSet that installed it, if any).
  void Ref();
  void Unref();

  // Looks key up in the files: L0 newest first, then one file per deeper
  // level. OK with *value set if the newest visible entry is a value;
  // NotFound if it is a tombstone or there is none; Corruption/IOError from
  // the table if a block is bad, Corruption if a table file is missing.
  Status Get(const ReadOptions& options, const LookupKey& key, std::string* value) const;

  // Get for many keys, batched per table: (*values)[i] / (*statuses)[i] answer
  // keys[i]. Both vectors are resized to keys.size().
  void MultiGet(const ReadOptions& options, const std::vector<const LookupKey*>& keys,
                std::vector<std::string>* values, std::vector<Status>* statuses) const;

  // Appends iterators (internal keys) that together yield every entry of the
  // version: one per L0 file, one concatenating iterator per deeper level.
  // The caller owns them and must keep this version referenced while they live.
  void AddIterators(const ReadOptions& options, std::vector<Iterator*>* iters) const;

  // True if some file of `level` overlaps the user-key range
  // [*smallest_user_key, *largest_user_key] (nullptr: unbounded on that side).
  bool OverlapInLevel(int level, const Slice* smallest_user_key,
                      const Slice* largest_user_key) const;

  // Appends to *inputs the files of `level` whose user-key range overlaps
  // [begin, end] (internal keys, nullptr: unbounded). For level 0 the range is
  // widened by each overlapping file until no more files join (LevelDB's rule),
  // so that no newer version of a key is left behind.
  void GetOverlappingInputs(int level, const InternalKey* begin, const InternalKey* end,
                            std::vector<FileMetaPtr>* inputs) const;

  int num_levels() const { return static_cast<int>(files_.size()); }
  const LevelFiles& files(int level) const { return files_[level]; }
  int NumFiles(int level) const { return static_cast<int>(files_[level].size()); }
  uint64_t NumBytes(int level) const { return level_bytes_[level]; }

  // Level 0: files / level0_file_num_compaction_trigger; level >= 1:
  // bytes / MaxBytesForLevel(level). The bottom level's score is 0. A level
  // with score >= 1 needs compacting.
  double compaction_score(int level) const { return scores_[level]; }
  // RocksDB's estimate of the bytes compaction must still rewrite to bring
  // every level under its target (drives the pending-bytes stall thresholds);
  // RocksDB's VersionStorageInfo::EstimateCompactionBytesNeeded with base
  // level 1:
  //   L0 counts when it has >= level0_file_num_compaction_trigger files or
  //   >= max_bytes_for_level_base bytes: its bytes, plus L1's bytes, are
  //   added, and its bytes carry into L1. For each level L in [1, bottom):
  //   size = bytes(L) + carried; if size > MaxBytesForLevel(L), the excess
  //   carries into L + 1, and if L + 1 holds bytes, excess * (1 +
  //   bytes(L + 1) / size) is added.
  uint64_t estimated_pending_compaction_bytes() const { return pending_compaction_bytes_; }

  // One line per file: "L<level> #<number> <size> [smallest .. largest]".
  std::string DebugString() const;

  const InternalKeyComparator* internal_comparator() const { return icmp_; }

 private:
  friend class VersionSet;

  ~Version() = default;
  void ComputeScores();
  void ComputePendingCompactionBytes();
  // The iterator over the files of `level` (>= 1), concatenated.
  Iterator* NewConcatenatingIterator(const ReadOptions& options, int level) const;

  const Options* const options_;
  const InternalKeyComparator* const icmp_;
  TableCache* const table_cache_;
  const std::vector<LevelFiles> files_;
  std::vector<uint64_t> level_bytes_;
  std::vector<double> scores_;
  uint64_t pending_compaction_bytes_ = 0;
  int refs_ = 0;
  // The set that tracks this version among its live versions; nullptr for a
  // version no VersionSet installed.
  VersionSet* vset_ = nullptr;
};

}  // namespace accelkv
