// FaultInjectionEnv: an Env wrapper for tests that injects I/O errors and
// simulates what a power loss does to files. Works over any base Env
// (PosixEnv and MemEnv alike); compiled into accelkv_env so every module's
// tests can use it.
//
// ERROR INJECTION
//   SetFailure(kind, after_n_ops, one_shot, path_filter) arms one rule per
//   FaultKind (a new call replaces the kind's rule). The rule lets the next
//   `after_n_ops` matching operations succeed and fails the one after; with
//   one_shot it then disarms itself, otherwise every later matching
//   operation fails until ClearFailures(). An operation matches when its
//   path contains path_filter (empty filter: every path); ".log" thus
//   selects WAL files. Injected errors are
//   Status::IOError("injected fault <kind>", path); the base Env is not
//   called for a failed operation.
//   Kinds: kWrite = WritableFile Append, Flush, PrepareWriteAt and WriteAt;
//   kSync = WritableFile Sync;
//   kRead = SequentialFile Read/Skip and RandomAccessFile Read;
//   kOpenReadable = NewSequentialFile/NewRandomAccessFile;
//   kOpenWritable = NewWritableFile/NewAppendableFile; kRename = RenameFile
//   (filter matched against src and target); kRemove = RemoveFile;
//   kSyncDir = SyncDir (filter matched against the directory).
//   OpCount(kind) counts every operation of that kind attempted through
//   this Env (whatever the filter, failed ones included); InjectedCount(kind)
//   counts the injected failures.
//
// CRASH MODEL (what DropUnsyncedData / RemoveFilesCreatedAfterLastDirSync /
// SimulateCrash do). A file is "tracked" once written through this Env
// (NewWritableFile, NewAppendableFile, or RenameFile's target); files not
// tracked are treated as fully durable. For every tracked file the Env
// records:
//   synced_size: the size of the file, as written through the syncing
//     writer, at its last successful WritableFile::Sync (never decreases
//     while the name lives; 0 after NewWritableFile; NewAppendableFile of an
//     untracked existing file starts at its current size, of a tracked one
//     keeps the tracked value). Bytes appended but not synced are lost.
//   entry_durable: whether its name is durable in its directory. A name
//     that did not exist before NewWritableFile/NewAppendableFile, and every
//     RenameFile target, is not durable until SyncDir(dirname of the path)
//     succeeds. Truncating an existing name keeps its entry state.
// A rename or a re-creation is an unsynced directory change that a crash
// undoes: when RenameFile moves a file whose entry is durable away from src,
// or replaces a durable file at target, the Env saves that durable content
// (its first synced_size bytes) as "pending restore" for that name, until
// SyncDir of the name's directory commits the change.
// On a crash (pessimistic: everything not durable is lost):
//   DropUnsyncedData(): truncates every tracked file to synced_size.
//   RemoveFilesCreatedAfterLastDirSync(): removes every tracked file whose
//     entry is not durable, then writes every pending restore back (synced)
//     under its name. E.g. write+Sync tmp, Rename(tmp, CURRENT), crash
//     before SyncDir: CURRENT holds its old content again and tmp is gone.
// Simplifications: RemoveFile and CreateDir/RemoveDir are durable at once
// (a crash never resurrects a removed file); directory entries are tracked
// by the exact dirname of the path as passed (no path normalization beyond
// trailing slashes); a rename across directories is committed by SyncDir of
// the target's directory for the target and of the source's for the source.
// Crash operations go straight to the base Env (they work while the
// filesystem is inactive) and read durable content into memory (fine for
// test-sized files).
// REQUIRES for the crash operations: no WritableFile of this Env is written
// concurrently (close them, or SetFilesystemActive(false) first, which makes
// all their writes fail).
//
// SetFilesystemActive(false) simulates a dead disk from that point: every
// Append, Flush, PrepareWriteAt, WriteAt, Sync, NewWritableFile,
// NewAppendableFile, RenameFile, RemoveFile, SyncDir, CreateDir, RemoveDir
// fails with
// IOError("filesystem inactive", path); reads and Close still work.
//
// Thread safety: safe for concurrent use, like any Env. File objects follow
// the Env contract. Ownership: the base Env is not owned and must outlive
// this Env and every file and lock obtained from it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "accelkv/env.h"
#include "util/thread_annotations.h"

namespace accelkv {

enum class FaultKind : int {
  kWrite = 0,
  kSync,
  kRead,
  kOpenReadable,
  kOpenWritable,
  kRename,
  kRemove,
  kSyncDir,
};
inline constexpr int kNumFaultKinds = 8;
const char* FaultKindName(FaultKind kind);

class FaultInjectionEnv final : public Env {
 public:
  // REQUIRES: base outlives this Env.
  explicit FaultInjectionEnv(Env* base);
  ~FaultInjectionEnv() override;

  FaultInjectionEnv(const FaultInjectionEnv&) = delete;
  FaultInjectionEnv& operator=(const FaultInjectionEnv&) = delete;

  Env* base() const { return base_; }

  // --- error injection ---
  // REQUIRES: after_n_ops >= 0.
  void SetFailure(FaultKind kind, int64_t after_n_ops, bool one_shot,
                  const std::string& path_filter = std::string()) EXCLUDES(mu_);
  void ClearFailure(FaultKind kind) EXCLUDES(mu_);
  void ClearFailures() EXCLUDES(mu_);
  uint64_t OpCount(FaultKind kind) const EXCLUDES(mu_);
  uint64_t InjectedCount(FaultKind kind) const EXCLUDES(mu_);
  void ResetCounters() EXCLUDES(mu_);

  // --- crash simulation (see the model above) ---
  void SetFilesystemActive(bool active) EXCLUDES(mu_);
  bool IsFilesystemActive() const EXCLUDES(mu_);
  Status DropUnsyncedData() EXCLUDES(mu_);
  Status RemoveFilesCreatedAfterLastDirSync() EXCLUDES(mu_);
  // DropUnsyncedData + RemoveFilesCreatedAfterLastDirSync + ResetState: the
  // files as a machine would find them after a power loss now. The
  // filesystem's active flag is left as it is.
  Status SimulateCrash() EXCLUDES(mu_);
  // Forgets all tracking: every file now on the base Env counts as durable.
  void ResetState() EXCLUDES(mu_);
  // For tests of this Env: the tracked synced size / entry durability.
  // False if fname is not tracked.
  bool GetTrackedState(const std::string& fname, uint64_t* synced_size, bool* entry_durable) const
      EXCLUDES(mu_);

  // --- Env ---
  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override;
  Status NewRandomAccessFile(const std::string& fname,
                             std::unique_ptr<RandomAccessFile>* result) override;
  // Passes options to the base Env (a mapped base file still sees read faults).
  Status NewRandomAccessFile(const std::string& fname, const RandomAccessFileOptions& options,
                             std::unique_ptr<RandomAccessFile>* result) override;
  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result) override;
  Status NewWritableFile(const std::string& fname, const WritableFileOptions& options,
                         std::unique_ptr<WritableFile>* result) override;
  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override;
  bool FileExists(const std::string& fname) override;
  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override;
  Status RemoveFile(const std::string& fname) override;
  Status CreateDir(const std::string& dirname) override;
  Status RemoveDir(const std::string& dirname) override;
  Status GetFileSize(const std::string& fname, uint64_t* file_size) override;
  Status RenameFile(const std::string& src, const std::string& target) override;
  Status SyncDir(const std::string& dirname) override;
  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override;
  Status UnlockFile(std::unique_ptr<FileLock> lock) override;
  uint64_t NowMicros() override;
  void SleepForMicroseconds(int micros) override;

  // Internal, for the file wrappers: counts the operation, then returns the
  // injected error or the inactive-filesystem error, else OK. `mutates`
  // operations fail while the filesystem is inactive.
  Status CheckOp(FaultKind kind, const std::string& path, bool mutates,
                 const std::string& path2 = std::string()) EXCLUDES(mu_);
  Status CheckActive(const std::string& path) const EXCLUDES(mu_);

  // Shared by the tracking map and the file's writers (so a rename while
  // open keeps the writer's Sync pointed at the right record).
  struct Tracked {
    uint64_t synced_size = 0;
    bool entry_durable = false;
  };
  void RecordSync(const std::shared_ptr<Tracked>& t, uint64_t size) EXCLUDES(mu_);

 private:
  struct Rule {
    bool armed = false;
    int64_t remaining_ok = 0;
    bool one_shot = false;
    std::string filter;
  };

  Status OpenWritable(const std::string& fname, bool append, const WritableFileOptions& options,
                      std::unique_ptr<WritableFile>* result) EXCLUDES(mu_);
  // Durable bytes of a file now at `path` (tracked or not), read from base.
  Status ReadDurable(const std::string& path, const Tracked* t, std::string* out);
  Status RewriteFile(const std::string& path, const Slice& data);

  Env* const base_;
  mutable std::mutex mu_;
  bool active_ GUARDED_BY(mu_) = true;
  Rule rules_[kNumFaultKinds] GUARDED_BY(mu_);
  uint64_t ops_[kNumFaultKinds] GUARDED_BY(mu_) = {};
  uint64_t injected_[kNumFaultKinds] GUARDED_BY(mu_) = {};
  std::map<std::string, std::shared_ptr<Tracked>> tracked_ GUARDED_BY(mu_);
  // name -> durable content a crash writes back under that name.
  std::map<std::string, std::string> pending_restore_ GUARDED_BY(mu_);
};

}  // namespace accelkv
