// DBImpl: the AccelKV engine behind the DB interface.
//
// Concurrency model (after LevelDB):
// - mu_ guards all mutable state below marked GUARDED_BY(mu_).
// - Writers queue in writers_; the front writer (the leader) merges the
//   batches of the writers queued behind it into one WAL record, appends it
//   and inserts into the memtable with mu_ released; only the leader touches
//   log_ and encodes into mem_ (its arena has one writer). With
//   allow_concurrent_memtable_write the group's writers that are awake help
//   link the encoded entries into mem_'s skiplist (MemTableLinkJob); the
//   leader publishes the group's sequence once all are linked. With
//   enable_pipelined_write the leader hands the lead on before the links,
//   and write_pipeline_ publishes groups' sequences in order.
// - Readers take references to mem_, imm_ and the current Version under mu_,
//   then read without it.
// - Flushes run on flush_pool_ (one thread), compactions on compaction_pool_
//   (max_background_jobs - 1 threads, at least 1). Several
//   compactions whose inputs do not overlap run at once; picking is done under
//   mu_ by the picker, execution without mu_ by a CompactionExecutor.
// - A background I/O error is sticky (bg_error_): every later write fails.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "accelkv/db.h"
#include "accelkv/env.h"
#include "compaction/compaction.h"
#include "compaction/compaction_executor.h"
#include "compaction/compaction_picker.h"
#include "db/db_stats.h"
#include "db/snapshot.h"
#include "db/write_pipeline.h"
#include "memtable/memtable.h"
#include "table/table_cache.h"
#include "util/internal_key.h"
#include "util/thread_annotations.h"
#include "util/thread_pool.h"
#include "version/version_edit.h"
#include "version/version_set.h"
#include "wal/log_writer.h"

namespace accelkv {

class GpuCompactionExecutor;
class MemTableLinkJob;

class DBImpl final : public DB {
 public:
  DBImpl(const Options& options, const std::string& dbname);
  ~DBImpl() override;

  Status Put(const WriteOptions& options, const Slice& key, const Slice& value) override;
  Status Delete(const WriteOptions& options, const Slice& key) override;
  Status Write(const WriteOptions& options, const WriteBatch& batch) override;
  Status Get(const ReadOptions& options, const Slice& key, std::string* value) override;
  std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) override;
  const Snapshot* GetSnapshot() override;
  void ReleaseSnapshot(const Snapshot* snapshot) override;
  Status Flush(const FlushOptions& options) override;
  Status CompactRange(const Slice* begin, const Slice* end) override;
  bool GetProperty(const Slice& property, std::string* value) override;
  Status Close() override;

  // Opens or creates the database; called by DB::Open.
  Status OpenImpl();

  // For tests: waits until no flush or compaction is pending or running.
  Status TEST_WaitForBackgroundWork();
  // For tests: called by a pipelined group's leader after it handed the lead
  // on and before it links the group's entries. Set before writes start.
  void TEST_SetBeforePipelinedLink(std::function<void()> hook) {
    test_before_pipelined_link_ = std::move(hook);
  }
  // For tests: called by a write leader before each group's WAL append
  // (without mu_). Set before writes start.
  void TEST_SetBeforeWalAppend(std::function<void()> hook) {
    test_before_wal_append_ = std::move(hook);
  }
  // For tests: how many queued writers sleep (block) waiting for a leader.
  int TEST_BlockedWriters();

 private:
  struct Writer;
  struct CompactionState;

  // --- open / recovery (db_impl_open.cc) ---
  Status NewDB();
  // Writes LOG (the old one becomes LOG.old): the open and the GPU status.
  void WriteInfoLog();
  Status Recover(VersionEdit* edit, bool* save_manifest) REQUIRES(mu_);
  Status RecoverLogFile(uint64_t log_number, bool last_log, bool* save_manifest, VersionEdit* edit,
                        SequenceNumber* max_sequence) REQUIRES(mu_);

  // --- write path (db_impl_write.cc) ---
  Status WriteImpl(const WriteOptions& options, const WriteBatch* batch);
  Status MakeRoomForWrite(bool force, std::unique_lock<std::mutex>& lock) REQUIRES(mu_);
  // Also collects the group's writers but the first into group_followers_.
  WriteBatch* BuildBatchGroup(Writer** last_writer) REQUIRES(mu_);
  // Without mu_, by the leader: puts the group's entries into mem, with the
  // followers' help where allowed.
  Status InsertGroup(const WriteBatch* group, MemTable* mem);
  // Without mu_, by the leader: encodes batch's entries into mem's arena as
  // a new *job, whose entries any thread may then link (MemTableLinkJob).
  Status PrepareLinkJob(const WriteBatch* batch, MemTable* mem,
                        std::shared_ptr<MemTableLinkJob>* job);
  // Writes the group led by writers_.front() (MakeRoomForWrite, WAL,
  // memtable), pops it from the queue and links its writers other than self
  // into *done with the group's status set. Returns that status.
  Status WriteGroup(Writer* self, std::unique_lock<std::mutex>& lock, Writer** done) REQUIRES(mu_);
  // Pops the queue's writers up to last_writer, sets their status and links
  // them through next_done from *first, in queue order. Returns the last.
  Writer* PopGroup(Writer* last_writer, const Status& status, Writer** first) REQUIRES(mu_);
  // Without mu_, by the leader: appends a group's record to the WAL, syncing
  // it if asked (*sync_error: the sync failed).
  Status AppendToWal(const Slice& contents, bool sync, bool* sync_error);
  // A group's outcome: its stats, or the sticky error that refuses later writes.
  void RecordGroupWritten(const Status& s, bool sync_error, size_t wal_bytes, bool sync)
      REQUIRES(mu_);
  // Makes the queue's front the leader, if any (else wakes Close's wait).
  void HandOffLead() REQUIRES(mu_);
  // The leader with enable_pipelined_write: WAL and encoding, then the lead
  // goes to the next writer, then the links and the wait for publication.
  Status PipelinedWriteGroup(Writer* self, std::unique_lock<std::mutex>& lock) REQUIRES(mu_);
  // Sets the state of every writer of a list built by WriteGroup to kDone.
  static void WakeWriters(Writer* done);
  Status SwitchMemtable() REQUIRES(mu_);
  // Creates WAL number `number` (memory-mapped with Options::allow_mmap_writes).
  Status NewWalFile(uint64_t number, std::unique_ptr<WritableFile>* file);
  // A new, unreferenced memtable with this DB's comparator and arena blocks
  // (Options::memtable_huge_pages).
  MemTable* NewMemTable() const;

  // --- read path (db_impl_read.cc) ---
  // An iterator over internal keys of mem_, imm_ and the current version;
  // *latest_snapshot is the last sequence at creation.
  Iterator* NewInternalIterator(const ReadOptions& options, SequenceNumber* latest_snapshot);

  // --- background work (db_impl_background.cc) ---
  void MaybeScheduleWork() REQUIRES(mu_);
  void BackgroundFlush();
  void BackgroundCompaction(std::unique_ptr<Compaction> c);
  Status FlushMemTable(MemTable* mem, uint64_t next_log_number, std::unique_lock<std::mutex>& lock)
      REQUIRES(mu_);
  Status WriteLevel0Table(MemTable* mem, VersionEdit* edit, uint64_t* file_number,
                          std::unique_lock<std::mutex>& lock) REQUIRES(mu_);
  Status RunCompaction(Compaction* c, std::unique_lock<std::mutex>& lock) REQUIRES(mu_);
  // LogAndApply, one at a time (flushes and compactions install concurrently).
  Status ApplyEdit(VersionEdit* edit, std::unique_lock<std::mutex>& lock) REQUIRES(mu_);
  // The picker, fed with the current version and what is running
  // (db_impl_compaction.cc). nullptr when nothing needs compacting.
  std::unique_ptr<Compaction> PickCompaction() REQUIRES(mu_);
  std::unique_ptr<Compaction> PickManualCompaction(int level, const InternalKey* begin,
                                                   const InternalKey* end) REQUIRES(mu_);
  void RegisterRunningCompaction(Compaction* c) REQUIRES(mu_);
  void UnregisterRunningCompaction(Compaction* c) REQUIRES(mu_);
  std::vector<const Compaction*> RunningCompactions() const REQUIRES(mu_);
  void RecordBackgroundError(const Status& s) REQUIRES(mu_);
  // Deletes the files no version, pending output or live WAL needs; drops
  // mu_ while it deletes them.
  void RemoveObsoleteFiles(std::unique_lock<std::mutex>& lock) REQUIRES(mu_);
  Status WaitForBackgroundWorkLocked(std::unique_lock<std::mutex>& lock) REQUIRES(mu_);

  // --- properties (db_impl_properties.cc) ---
  std::string StatsString() REQUIRES(mu_);
  std::string StatsJson() REQUIRES(mu_);

  const Comparator* user_comparator() const { return internal_comparator_.user_comparator(); }

  // Constant after construction.
  Env* const env_;
  const InternalKeyComparator internal_comparator_;
  const Options options_;  // sanitized
  const std::string dbname_;
  std::shared_ptr<Cache> block_cache_;
  TableOptions table_options_;
  std::unique_ptr<TableCache> table_cache_;
  std::unique_ptr<FileLock> db_lock_;

  std::mutex mu_;
  std::condition_variable bg_cv_;  // background work finished
  std::atomic<bool> shutting_down_{false};
  bool closed_ GUARDED_BY(mu_) = false;

  MemTable* mem_ GUARDED_BY(mu_) = nullptr;
  // Immutable memtables, oldest first, with the WAL number each was written to.
  struct ImmutableMemTable {
    MemTable* mem;
    uint64_t log_number;
  };
  std::deque<ImmutableMemTable> imm_ GUARDED_BY(mu_);
  std::atomic<bool> has_imm_{false};
  // Whether a waiting writer's yield phase pays off lately (Writer::Await):
  // a decaying score, raised when a writer was released while yielding and
  // lowered when it had to block anyway. Relaxed, racy updates: a heuristic.
  std::atomic<int32_t> writer_yield_credit_{0};

  std::unique_ptr<WritableFile> logfile_;
  uint64_t logfile_number_ GUARDED_BY(mu_) = 0;
  std::unique_ptr<log::Writer> log_;
  // False from a memtable switch (a new WAL) until a synced write has synced
  // the directory (AppendToWal). Only the write leader reads or writes it.
  bool wal_dir_synced_ = true;
  std::deque<Writer*> writers_ GUARDED_BY(mu_);
  WriteBatch tmp_batch_ GUARDED_BY(mu_);
  // The current group's writers but its leader; the leader's alone.
  std::vector<Writer*> group_followers_;
  // Pipelined groups in flight (enable_pipelined_write).
  std::unique_ptr<WritePipeline<Writer>> write_pipeline_;
  std::function<void()> test_before_pipelined_link_;  // TEST_SetBeforePipelinedLink
  std::function<void()> test_before_wal_append_;      // TEST_SetBeforeWalAppend

  SnapshotList snapshots_ GUARDED_BY(mu_);

  // Table files being written by flushes/compactions: not obsolete.
  std::set<uint64_t> pending_outputs_ GUARDED_BY(mu_);
  bool flush_scheduled_ GUARDED_BY(mu_) = false;
  int compactions_running_ GUARDED_BY(mu_) = 0;
  std::vector<Compaction*> running_compactions_ GUARDED_BY(mu_);
  bool manual_compaction_active_ GUARDED_BY(mu_) = false;
  bool manifest_busy_ GUARDED_BY(mu_) = false;
  std::condition_variable manifest_cv_;

  std::unique_ptr<VersionSet> versions_;
  Status bg_error_ GUARDED_BY(mu_);
  DBStats stats_ GUARDED_BY(mu_);

  std::unique_ptr<CompactionPicker> picker_;
  std::unique_ptr<CompactionExecutor> cpu_executor_;
  // nullptr: every compaction runs on the CPU (gpu_status_ says why).
  std::unique_ptr<GpuCompactionExecutor> gpu_executor_;
  std::string gpu_status_;  // one line, written to LOG at open and shown in accelkv.stats
  // Declared last: destroyed first, so jobs never outlive what they use.
  // Flushes get their own thread so a long compaction never delays them.
  std::unique_ptr<ThreadPool> flush_pool_;
  std::unique_ptr<ThreadPool> compaction_pool_;
};

// Fills in defaults and clamps out-of-range values.
Options SanitizeOptions(const std::string& dbname, const InternalKeyComparator* icmp,
                        const Options& src);

}  // namespace accelkv
