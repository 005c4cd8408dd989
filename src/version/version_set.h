// VersionSet: the current Version, the counters that outlive it (next file
// number, last sequence, log number, compact pointers) and the MANIFEST that
// records every change as a VersionEdit (docs/FORMAT.md, "MANIFEST").
//
// Durability: a version edit is installed only after its MANIFEST record is
// written and synced. The first LogAndApply after open writes a new MANIFEST
// that starts with a snapshot of the whole state, syncs it, then points
// CURRENT at it (SetCurrentFile: temp file, sync, rename, sync dir).
//
// Thread safety: every method REQUIRES the DB mutex, except that
// LogAndApply releases it while it writes the MANIFEST. Callers serialize
// LogAndApply calls (DBImpl::ApplyEdit).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "accelkv/env.h"
#include "accelkv/options.h"
#include "table/table_cache.h"
#include "util/internal_key.h"
#include "version/version.h"
#include "version/version_edit.h"
#include "wal/log_writer.h"

namespace accelkv {

class VersionSet {
 public:
  // options must be sanitized (num_levels etc.) and outlive the set.
  VersionSet(std::string dbname, const Options* options, TableCache* table_cache,
             const InternalKeyComparator* icmp);
  VersionSet(const VersionSet&) = delete;
  VersionSet& operator=(const VersionSet&) = delete;
  // REQUIRES: no version other than current() is still referenced.
  ~VersionSet();

  // Applies *edit to the current version: sets the edit's log number (if
  // unset, the current one), next file number and last sequence; writes and
  // syncs the record; installs the new version as current.
  // REQUIRES: *mu is held on entry; it is released during MANIFEST I/O and
  // held again on return. On any error the current version is unchanged and
  // the MANIFEST is abandoned (the next call starts a fresh one), so a record
  // of unknown fate is never built upon.
  Status LogAndApply(VersionEdit* edit, std::mutex* mu);

  // Rebuilds the state from CURRENT and the MANIFEST it names. Corruption for
  // a missing or malformed CURRENT/MANIFEST or an edit that does not apply
  // (e.g. removes a file that is not there); InvalidArgument when the
  // database's comparator name differs from options->comparator's. A torn
  // final record (crash during a MANIFEST append) is ignored: it was never
  // acknowledged. Sets *save_manifest (always true today: a fresh MANIFEST
  // is written by the next LogAndApply).
  Status Recover(bool* save_manifest);

  Version* current() const { return current_; }

  uint64_t ManifestFileNumber() const { return manifest_file_number_; }
  uint64_t NewFileNumber() { return next_file_number_++; }
  // Gives back a number from NewFileNumber() if nothing else was allocated since.
  void ReuseFileNumber(uint64_t file_number) {
    if (next_file_number_ == file_number + 1) next_file_number_ = file_number;
  }
  // Makes sure later numbers are above `number`.
  void MarkFileNumberUsed(uint64_t number) {
    if (next_file_number_ <= number) next_file_number_ = number + 1;
  }

  // The last sequence visible to readers. Atomic: with pipelined writes it
  // is published by whichever writer links the oldest group in flight
  // (db/write_pipeline.h), without the DB mutex; release/acquire, so a
  // reader that sees a sequence sees every memtable entry up to it.
  SequenceNumber LastSequence() const { return last_sequence_.load(std::memory_order_acquire); }
  // REQUIRES: s >= LastSequence()
  void SetLastSequence(SequenceNumber s) { last_sequence_.store(s, std::memory_order_release); }
  // WALs numbered below this are no longer needed.
  uint64_t LogNumber() const { return log_number_; }

  int NumLevels() const { return options_->num_levels; }
  int NumLevelFiles(int level) const { return current_->NumFiles(level); }
  uint64_t NumLevelBytes(int level) const { return current_->NumBytes(level); }
  double CompactionScore(int level) const { return current_->compaction_score(level); }
  uint64_t EstimatedPendingCompactionBytes() const {
    return current_->estimated_pending_compaction_bytes();
  }

  // Where the next size-triggered compaction of `level` starts: an internal
  // key, empty for the start of the level. Set through VersionEdit.
  const std::string& compact_pointer(int level) const { return compact_pointers_[level]; }

  // Adds the numbers of every table file referenced by any live version.
  void AddLiveFiles(std::set<uint64_t>* live) const;

 private:
  class Builder;
  friend class Version;

  // Encodes a snapshot of the current state (comparator, counters, compact
  // pointers, every file), the first record of a new MANIFEST.
  void EncodeSnapshot(std::string* record) const;
  // Installs v as current_ (and tracks it in live_versions_).
  void AppendVersion(Version* v);
  void RemoveVersion(Version* v);  // called by Version's last Unref
  // Closes the MANIFEST after a failed write; the next LogAndApply starts a
  // new one. A freshly created one that CURRENT does not name is removed.
  void AbandonManifest(uint64_t manifest_number, bool freshly_created);

  Env* const env_;
  const std::string dbname_;
  const Options* const options_;
  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;

  uint64_t next_file_number_ = 2;
  uint64_t manifest_file_number_ = 0;
  std::atomic<SequenceNumber> last_sequence_{0};
  uint64_t log_number_ = 0;

  std::unique_ptr<WritableFile> descriptor_file_;
  std::unique_ptr<log::Writer> descriptor_log_;
  // Every version still referenced (current_ included).
  std::set<Version*> live_versions_;
  Version* current_ = nullptr;
  std::vector<std::string> compact_pointers_;
};

}  // namespace accelkv
