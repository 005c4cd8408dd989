// DBImpl background work: scheduling, flushes, compactions, obsolete files,
// and the user-triggered Flush and CompactRange.
#include <algorithm>

#include "compaction/subcompaction_boundaries.h"
#include "db/builder.h"
#include "db/db_impl.h"
#include "gpu/gpu_executor.h"
#include "util/filename.h"

namespace accelkv {

void DBImpl::MaybeScheduleWork() {
  if (shutting_down_.load() || !bg_error_.ok()) return;
  if (!imm_.empty() && !flush_scheduled_) {
    flush_scheduled_ = true;
    flush_pool_->Schedule([this] { BackgroundFlush(); });
  }
  if (manual_compaction_active_) return;  // CompactRange owns the tree
  while (compactions_running_ < compaction_pool_->size()) {
    std::unique_ptr<Compaction> c = PickCompaction();
    if (!c) break;
    RegisterRunningCompaction(c.get());
    compactions_running_++;
    Compaction* raw = c.release();
    compaction_pool_->Schedule(
        [this, raw] { BackgroundCompaction(std::unique_ptr<Compaction>(raw)); });
  }
}

void DBImpl::BackgroundFlush() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!imm_.empty() && bg_error_.ok() && !shutting_down_.load()) {
    ImmutableMemTable oldest = imm_.front();
    const uint64_t next_log = imm_.size() > 1 ? imm_[1].log_number : logfile_number_;
    Status s = FlushMemTable(oldest.mem, next_log, lock);
    if (!s.ok()) {
      // A flush cut short by Close is no error: the WAL still has the data.
      if (!shutting_down_.load()) RecordBackgroundError(s);
      break;
    }
    imm_.pop_front();
    oldest.mem->Unref();
    has_imm_.store(!imm_.empty(), std::memory_order_release);
    RemoveObsoleteFiles(lock);
    bg_cv_.notify_all();
  }
  flush_scheduled_ = false;
  MaybeScheduleWork();
  bg_cv_.notify_all();
}

Status DBImpl::FlushMemTable(MemTable* mem, uint64_t next_log_number,
                             std::unique_lock<std::mutex>& lock) {
  VersionEdit edit;
  uint64_t file_number = 0;
  Status s = WriteLevel0Table(mem, &edit, &file_number, lock);
  if (s.ok() && shutting_down_.load()) {
    // Nothing is lost: the WAL still holds the memtable's data.
    s = Status::Aborted("database is closing");
  }
  if (s.ok()) {
    edit.SetLogNumber(next_log_number);  // earlier logs are no longer needed
    s = ApplyEdit(&edit, lock);
  }
  // The table stays pending until its version is installed: ApplyEdit drops
  // mu_, and a RemoveObsoleteFiles meanwhile must not delete it.
  pending_outputs_.erase(file_number);
  return s;
}

Status DBImpl::WriteLevel0Table(MemTable* mem, VersionEdit* edit, uint64_t* file_number,
                                std::unique_lock<std::mutex>& lock) {
  const uint64_t start = env_->NowMicros();
  FileMetaData meta;
  meta.number = versions_->NewFileNumber();
  pending_outputs_.insert(meta.number);
  *file_number = meta.number;  // the caller erases it from pending_outputs_
  std::unique_ptr<Iterator> iter(mem->NewIterator());
  // A snapshot taken after this point has a sequence at least as new as
  // every entry of mem, so it sees only versions the flush keeps.
  std::vector<SequenceNumber> snapshots = snapshots_.Sequences();
  Status s;
  uint64_t dropped = 0;
  {
    lock.unlock();
    s = BuildTable(dbname_, env_, table_options_, user_comparator(), std::move(snapshots),
                   iter.get(), &meta, &dropped);
    lock.lock();
  }
  stats_.flush_dropped_entries += dropped;
  if (s.ok() && meta.file_size > 0) {
    edit->AddFile(0, meta);
    stats_.flushes++;
    stats_.flush_bytes_written += meta.file_size;
    stats_.levels[0].bytes_written += meta.file_size;
    stats_.levels[0].micros += env_->NowMicros() - start;
  }
  return s;
}

// Serializes LogAndApply between flushes and compactions running at once.
namespace {

// True when the edit adds a table file that it does not also remove from
// another level (a trivial move adds and removes the same number).
bool AddsNewTableFiles(const VersionEdit& edit) {
  for (const auto& [level, f] : edit.new_files()) {
    bool moved = false;
    for (const auto& [from, number] : edit.deleted_files()) moved = moved || number == f.number;
    if (!moved) return true;
  }
  return false;
}

}  // namespace

Status DBImpl::ApplyEdit(VersionEdit* edit, std::unique_lock<std::mutex>& lock) {
  manifest_cv_.wait(lock, [this] { return !manifest_busy_; });
  manifest_busy_ = true;
  Status s;
  if (AddsNewTableFiles(*edit) || edit->has_log_number()) {
    // The new tables' directory entries must be durable before the MANIFEST
    // names them (and before their inputs or WALs are deleted), and so must
    // the WAL a flush's edit names (SwitchMemtable leaves its entry to the
    // first synced write or to this). A trivial move only renames a file's
    // level: its entry is durable already.
    lock.unlock();
    s = env_->SyncDir(dbname_);
    lock.lock();
  }
  if (s.ok()) s = versions_->LogAndApply(edit, &mu_);
  // The MANIFEST may now hold the edit or not: sticky, so that no file it may
  // name is deleted as obsolete and no later edit builds on a guess.
  if (!s.ok()) RecordBackgroundError(s);
  manifest_busy_ = false;
  manifest_cv_.notify_one();
  return s;
}

void DBImpl::BackgroundCompaction(std::unique_ptr<Compaction> c) {
  std::unique_lock<std::mutex> lock(mu_);
  Status s;
  if (!shutting_down_.load() && bg_error_.ok()) s = RunCompaction(c.get(), lock);
  if (!s.ok() && !shutting_down_.load()) RecordBackgroundError(s);
  UnregisterRunningCompaction(c.get());
  compactions_running_--;
  MaybeScheduleWork();
  bg_cv_.notify_all();
}

Status DBImpl::RunCompaction(Compaction* c, std::unique_lock<std::mutex>& lock) {
  const uint64_t start = env_->NowMicros();
  VersionEdit edit;
  LevelCompactionStats& lstats = stats_.levels[c->output_level()];
  if (c->IsTrivialMove()) {
    for (const FileMetaPtr& f : c->inputs(0)) {
      edit.RemoveFile(c->level(), f->number);
      edit.AddFile(c->output_level(), *f);
    }
    Status s = ApplyEdit(&edit, lock);
    if (s.ok()) stats_.trivial_moves++;
    return s;
  }

  std::vector<uint64_t> allocated;
  CompactionJobSpec spec;
  spec.dbname = dbname_;
  spec.env = env_;
  spec.table_options = table_options_;
  spec.table_cache = table_cache_.get();
  spec.compaction = c;
  spec.snapshots = snapshots_.Sequences();
  spec.internal_comparator = &internal_comparator_;
  spec.new_file_number = [this, &allocated] {
    std::lock_guard<std::mutex> l(mu_);
    uint64_t n = versions_->NewFileNumber();
    pending_outputs_.insert(n);
    allocated.push_back(n);
    return n;
  };

  CompactionJobResult result;
  lock.unlock();
  // With several subcompactions the picker's boundaries are the metadata
  // rule's (it holds mu_ and reads no file); here, without mu_, the inputs'
  // indexes balance the ranges' bytes (subcompaction_boundaries.h, step 3),
  // so the CPU executor's range threads finish together. The job, and a
  // fallback from the GPU, runs with these boundaries.
  std::unique_ptr<Compaction> balanced;
  if (!c->subcompaction_boundaries().empty()) {
    std::vector<std::string> boundaries = GenSubcompactionBoundaries(
        c->params(), internal_comparator_.user_comparator(), options_.max_subcompactions,
        TableCacheOffsets(table_cache_.get()));
    if (boundaries != c->subcompaction_boundaries()) {
      Compaction::Params params = c->params();
      params.subcompaction_boundaries = std::move(boundaries);
      balanced = std::make_unique<Compaction>(std::move(params), c->internal_comparator());
      spec.compaction = balanced.get();
    }
  }
  CompactionExecutor* executor = cpu_executor_.get();
  bool needs_chunks = false;
  if (gpu_executor_ != nullptr) {
    needs_chunks = gpu_executor_->NeedsChunkBoundaries(spec);
    if (!needs_chunks && gpu_executor_->ShouldOffload(spec)) executor = gpu_executor_.get();
  }
  // A job too large for the device runs there in chunks at subcompaction
  // boundaries: its own (max_subcompactions) and more read from its inputs'
  // indexes where its ranges are too large. They become part of the job, so
  // a fallback to the CPU cuts its output at the same keys. If the indexes
  // cannot be read, or the job has no boundary at all (no key can cut it),
  // the CPU runs the job as picked (and meets the same read error, if any,
  // as the judge).
  std::unique_ptr<Compaction> chunked;
  if (needs_chunks) {
    std::vector<std::string> boundaries;
    if (gpu_executor_->ChunkBoundaries(spec, &boundaries).ok()) {
      if (boundaries != spec.compaction->subcompaction_boundaries()) {
        Compaction::Params params = spec.compaction->params();
        params.subcompaction_boundaries = std::move(boundaries);
        chunked = std::make_unique<Compaction>(std::move(params), c->internal_comparator());
        spec.compaction = chunked.get();
      }
      if (gpu_executor_->ShouldOffload(spec)) executor = gpu_executor_.get();
    }
  }
  Status s = executor->Run(spec, &result);
  bool gpu_fell_back = false;
  if (!s.ok() && executor != cpu_executor_.get() && !shutting_down_.load()) {
    // The GPU is an accelerator, never the judge: whatever went wrong there
    // (a device error, out of memory, a checksum mismatch it reported), the
    // job reruns on the CPU, whose verdict stands. Nothing of the GPU run was
    // installed; its files (any written before the failure, e.g. chunks encoded
    // before a failed device encode) are removed first.
    for (const FileMetaData& f : result.outputs) env_->RemoveFile(TableFileName(dbname_, f.number));
    gpu_fell_back = true;
    result = CompactionJobResult();
    executor = cpu_executor_.get();
    s = executor->Run(spec, &result);
  }
  lock.lock();
  if (gpu_fell_back) stats_.executors[gpu_executor_->Name()].fallbacks++;

  if (s.ok() && shutting_down_.load()) s = Status::Aborted("database is closing");
  bool outputs_may_be_named = false;
  if (s.ok()) {
    for (int which = 0; which < 2; which++) {
      for (const FileMetaPtr& f : c->inputs(which)) edit.RemoveFile(c->level() + which, f->number);
    }
    for (const FileMetaData& out : result.outputs) edit.AddFile(c->output_level(), out);
    if (c->reason() != CompactionReason::kManual) {
      InternalKey pointer;
      pointer.DecodeFrom(CompactionPicker::NextCompactPointer(*c));
      edit.SetCompactPointer(c->level(), pointer);
    }
    s = ApplyEdit(&edit, lock);
    // A failed ApplyEdit may still have left the edit in the MANIFEST (an
    // append whose sync failed): its outputs must stay on disk.
    outputs_may_be_named = true;
  }
  for (uint64_t n : allocated) pending_outputs_.erase(n);
  if (s.ok()) {
    uint64_t in0 = 0, in1 = 0, out = 0;
    for (const FileMetaPtr& f : c->inputs(0)) in0 += f->file_size;
    for (const FileMetaPtr& f : c->inputs(1)) in1 += f->file_size;
    for (const FileMetaData& f : result.outputs) out += f.file_size;
    lstats.compactions++;
    lstats.bytes_read_level += in0;
    lstats.bytes_read_next_level += in1;
    lstats.bytes_written += out;
    lstats.micros += env_->NowMicros() - start;
    ExecutorStats& es = stats_.executors[executor->Name()];
    es.jobs++;
    if (needs_chunks) es.chunked_jobs++;
    es.input_bytes += in0 + in1;
    es.output_bytes += out;
    es.micros += env_->NowMicros() - start;
    es.cpu_seconds += result.cpu_seconds;
    es.device_busy_micros += result.device_busy_micros;
    AddStages(result.stage_micros, &es.stage_micros);
    AddStages(result.stage_cpu_seconds, &es.stage_cpu_seconds);
  } else if (!outputs_may_be_named) {
    // Outputs of a failed job never reach a version; remove them now.
    for (const FileMetaData& f : result.outputs) env_->RemoveFile(TableFileName(dbname_, f.number));
  }
  RemoveObsoleteFiles(lock);
  return s;
}

void DBImpl::RemoveObsoleteFiles(std::unique_lock<std::mutex>& lock) {
  if (!bg_error_.ok()) return;  // the state on disk is uncertain: keep everything
  std::set<uint64_t> live = pending_outputs_;
  versions_->AddLiveFiles(&live);
  std::vector<std::string> filenames;
  env_->GetChildren(dbname_, &filenames);                // ignoring errors on purpose
  std::vector<std::pair<std::string, uint64_t>> doomed;  // name, table number or 0
  const uint64_t min_log = versions_->LogNumber();
  const uint64_t manifest = versions_->ManifestFileNumber();
  for (const std::string& name : filenames) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    bool keep = true;
    switch (type) {
      case FileType::kLogFile:
        keep = number >= min_log || number == logfile_number_;
        break;
      case FileType::kDescriptorFile:
        keep = number >= manifest;
        break;
      case FileType::kTableFile:
      case FileType::kTempFile:
        keep = live.count(number) > 0;
        break;
      case FileType::kCurrentFile:
      case FileType::kLockFile:
      case FileType::kInfoLogFile:
        keep = true;
        break;
    }
    if (!keep) doomed.push_back({name, type == FileType::kTableFile ? number : 0});
  }
  if (doomed.empty()) return;
  // The files are deleted without mu_, as LevelDB does: a doomed file stays
  // obsolete (file numbers are never reused, and no version or pending
  // output names it), so a second remover at most fails to find it. Under
  // mu_ the unlinks of a compaction's inputs (and the unmaps of their
  // cached tables) held up every writer, which takes mu_ for each group: a
  // lone writer beside 15 busy threads slept on futexes for 23% of its time,
  // 2% without them, and loaded 1.25x faster
  // (bench/results/2026-11-26-h100-unlink-outside-mutex.md).
  lock.unlock();
  for (const auto& [name, table] : doomed) {
    if (table != 0) table_cache_->Evict(table);
    env_->RemoveFile(dbname_ + "/" + name);
  }
  lock.lock();
}

Status DBImpl::WaitForBackgroundWorkLocked(std::unique_lock<std::mutex>& lock) {
  while (bg_error_.ok() && (flush_scheduled_ || compactions_running_ > 0 || !imm_.empty())) {
    MaybeScheduleWork();
    if (!flush_scheduled_ && compactions_running_ == 0 && !imm_.empty() && shutting_down_.load())
      break;
    bg_cv_.wait(lock);
  }
  return bg_error_;
}

Status DBImpl::TEST_WaitForBackgroundWork() {
  std::unique_lock<std::mutex> lock(mu_);
  return WaitForBackgroundWorkLocked(lock);
}

Status DBImpl::Flush(const FlushOptions& options) {
  Status s = WriteImpl(WriteOptions(), nullptr);  // switches a non-empty memtable
  if (!s.ok() || !options.wait) return s;
  std::unique_lock<std::mutex> lock(mu_);
  while (bg_error_.ok() && !imm_.empty()) {
    MaybeScheduleWork();
    bg_cv_.wait(lock);
  }
  return bg_error_;
}

Status DBImpl::CompactRange(const Slice* begin, const Slice* end) {
  Status s = Flush(FlushOptions());
  if (!s.ok()) return s;
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_) return Status::InvalidArgument("database is closed");
  // Take the tree: wait for running compactions, then keep new ones out.
  bg_cv_.wait(lock, [this] { return !manual_compaction_active_; });
  manual_compaction_active_ = true;
  while (compactions_running_ > 0 && bg_error_.ok()) bg_cv_.wait(lock);

  InternalKey begin_key, end_key;
  if (begin != nullptr) begin_key = InternalKey(*begin, kMaxSequenceNumber, kValueTypeForSeek);
  if (end != nullptr) end_key = InternalKey(*end, 0, ValueType::kDeletion);
  const InternalKey* b = begin != nullptr ? &begin_key : nullptr;
  const InternalKey* e = end != nullptr ? &end_key : nullptr;

  int max_level = 1;  // L0 -> L1 always runs
  for (int level = 1; level < options_.num_levels; level++) {
    if (versions_->current()->OverlapInLevel(level, begin, end)) max_level = level;
  }
  for (int level = 0; level < max_level && s.ok(); level++) {
    // A level is compacted into the next in pieces of bounded size.
    while (s.ok() && bg_error_.ok()) {
      std::unique_ptr<Compaction> c = PickManualCompaction(level, b, e);
      if (!c) break;
      RegisterRunningCompaction(c.get());
      s = RunCompaction(c.get(), lock);
      UnregisterRunningCompaction(c.get());
    }
  }
  if (s.ok()) s = bg_error_;
  manual_compaction_active_ = false;
  MaybeScheduleWork();
  bg_cv_.notify_all();
  return s;
}

}  // namespace accelkv
