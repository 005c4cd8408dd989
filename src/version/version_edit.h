// VersionEdit: one change to the version set (files added and removed, and
// counters), the unit recorded in the MANIFEST. A MANIFEST is a WAL-format log
// whose every record is one encoded VersionEdit (docs/FORMAT.md, "MANIFEST").
//
// Thread safety: none; a VersionEdit is built and used by one thread.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "accelkv/slice.h"
#include "accelkv/status.h"
#include "util/internal_key.h"
#include "version/file_meta.h"

namespace accelkv {

// Levels are encoded as varint32; a decoded level above this is corrupt.
// (The level count itself is Options::num_levels, checked by VersionSet.)
inline constexpr uint32_t kMaxEncodedLevel = 1u << 16;

class VersionEdit {
 public:
  VersionEdit() = default;

  void Clear() { *this = VersionEdit(); }

  void SetComparatorName(const Slice& name) {
    has_comparator_ = true;
    comparator_ = name.ToString();
  }
  void SetLogNumber(uint64_t num) {
    has_log_number_ = true;
    log_number_ = num;
  }
  void SetNextFile(uint64_t num) {
    has_next_file_number_ = true;
    next_file_number_ = num;
  }
  void SetLastSequence(SequenceNumber seq) {
    has_last_sequence_ = true;
    last_sequence_ = seq;
  }
  // Where the next size-triggered compaction of `level` starts (an internal key).
  void SetCompactPointer(int level, const InternalKey& key) {
    compact_pointers_.emplace_back(level, key);
  }

  // Adds the table described by f to level. f.smallest/f.largest must be set.
  void AddFile(int level, const FileMetaData& f) { new_files_.emplace_back(level, f); }
  // Removes table `file` from level.
  void RemoveFile(int level, uint64_t file) { deleted_files_.emplace(level, file); }

  bool has_comparator() const { return has_comparator_; }
  const std::string& comparator() const { return comparator_; }
  bool has_log_number() const { return has_log_number_; }
  uint64_t log_number() const { return log_number_; }
  bool has_next_file_number() const { return has_next_file_number_; }
  uint64_t next_file_number() const { return next_file_number_; }
  bool has_last_sequence() const { return has_last_sequence_; }
  SequenceNumber last_sequence() const { return last_sequence_; }

  using DeletedFileSet = std::set<std::pair<int, uint64_t>>;
  const std::vector<std::pair<int, InternalKey>>& compact_pointers() const {
    return compact_pointers_;
  }
  const DeletedFileSet& deleted_files() const { return deleted_files_; }
  const std::vector<std::pair<int, FileMetaData>>& new_files() const { return new_files_; }

  // Appends the encoding (docs/format/manifest.md) to *dst.
  void EncodeTo(std::string* dst) const;
  // Replaces *this with the edit encoded in src. Corruption (and *this
  // unspecified) on any malformed, truncated or unknown field.
  Status DecodeFrom(const Slice& src);

  std::string DebugString() const;

 private:
  std::string comparator_;
  uint64_t log_number_ = 0;
  uint64_t next_file_number_ = 0;
  SequenceNumber last_sequence_ = 0;
  bool has_comparator_ = false;
  bool has_log_number_ = false;
  bool has_next_file_number_ = false;
  bool has_last_sequence_ = false;

  std::vector<std::pair<int, InternalKey>> compact_pointers_;
  DeletedFileSet deleted_files_;
  std::vector<std::pair<int, FileMetaData>> new_files_;
};

}  // namespace accelkv
