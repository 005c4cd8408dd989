// DBImpl open and recovery: create or recover the MANIFEST, replay WALs.
//
// Recovery order: CURRENT -> MANIFEST (the version set), then every WAL with
// number >= the manifest's log number, oldest first, into memtables that are
// written to level 0. A new WAL is started and the state is logged to the
// MANIFEST before Open returns, so replayed logs can be deleted.
#include <algorithm>

#include "db/builder.h"
#include "db/db_impl.h"
#include "memtable/write_batch_internal.h"
#include "util/filename.h"
#include "version/current_file.h"
#include "wal/log_reader.h"

namespace accelkv {

Status DBImpl::NewDB() {
  VersionEdit new_db;
  new_db.SetComparatorName(user_comparator()->Name());
  new_db.SetLogNumber(0);
  new_db.SetNextFile(2);
  new_db.SetLastSequence(0);

  const std::string manifest = DescriptorFileName(dbname_, 1);
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(manifest, &file);
  if (!s.ok()) return s;
  {
    log::Writer log(file.get());
    std::string record;
    new_db.EncodeTo(&record);
    s = log.AddRecord(record);
    if (s.ok()) s = file->Sync();
    if (s.ok()) s = file->Close();
  }
  if (s.ok()) {
    s = SetCurrentFile(env_, dbname_, 1);
  } else {
    env_->RemoveFile(manifest);
  }
  return s;
}

void DBImpl::WriteInfoLog() {
  // As LevelDB: the previous LOG becomes LOG.old. The info log is advice for
  // people; failing to write it never fails Open.
  const std::string name = InfoLogFileName(dbname_);
  if (env_->FileExists(name)) env_->RenameFile(name, OldInfoLogFileName(dbname_));
  std::unique_ptr<WritableFile> file;
  if (!env_->NewWritableFile(name, &file).ok()) return;
  const std::string text = "accelkv: open " + dbname_ + "\n" + gpu_status_ + "\n";
  if (file->Append(text).ok()) file->Close();
}

Status DBImpl::OpenImpl() {
  std::unique_lock<std::mutex> lock(mu_);
  env_->CreateDir(dbname_);  // may already exist
  Status s = env_->LockFile(LockFileName(dbname_), &db_lock_);
  if (!s.ok()) return s;

  if (!env_->FileExists(CurrentFileName(dbname_))) {
    if (!options_.create_if_missing) {
      return Status::InvalidArgument(dbname_, "does not exist (create_if_missing is false)");
    }
    s = NewDB();
    if (!s.ok()) return s;
  } else if (options_.error_if_exists) {
    return Status::InvalidArgument(dbname_, "exists (error_if_exists is true)");
  }

  WriteInfoLog();

  VersionEdit edit;
  bool save_manifest = false;
  s = Recover(&edit, &save_manifest);
  if (!s.ok()) return s;

  // A fresh WAL for new writes.
  const uint64_t new_log_number = versions_->NewFileNumber();
  std::unique_ptr<WritableFile> lfile;
  s = NewWalFile(new_log_number, &lfile);
  if (!s.ok()) return s;
  logfile_ = std::move(lfile);
  logfile_number_ = new_log_number;
  log_ = std::make_unique<log::Writer>(logfile_.get());
  mem_ = NewMemTable();
  mem_->Ref();

  // The new WAL's directory entry must be durable before the MANIFEST names
  // it and before a synced write to it is acknowledged: ApplyEdit syncs the
  // directory for an edit that sets a log number, before any write.
  edit.SetLogNumber(logfile_number_);
  s = ApplyEdit(&edit, lock);
  if (!s.ok()) return s;
  RemoveObsoleteFiles(lock);
  MaybeScheduleWork();
  return Status::OK();
}

Status DBImpl::Recover(VersionEdit* edit, bool* save_manifest) {
  Status s = versions_->Recover(save_manifest);
  if (!s.ok()) return s;

  // Logs listed in the directory that the manifest does not cover yet.
  const uint64_t min_log = versions_->LogNumber();
  std::vector<std::string> filenames;
  s = env_->GetChildren(dbname_, &filenames);
  if (!s.ok()) return s;
  std::set<uint64_t> expected;
  versions_->AddLiveFiles(&expected);
  std::vector<uint64_t> logs;
  for (const std::string& name : filenames) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    expected.erase(number);
    if (type == FileType::kLogFile && number >= min_log) logs.push_back(number);
  }
  if (!expected.empty()) {
    return Status::Corruption("missing table files, e.g. " +
                              TableFileName(dbname_, *expected.begin()));
  }
  // The WAL the MANIFEST names is deleted only after a later edit (naming a
  // newer WAL) is synced, so it always exists. If it does not, the MANIFEST
  // lost synced edits (truncated or damaged): opening the older state would
  // silently drop the data of tables and WALs those edits covered.
  if (min_log != 0 && std::find(logs.begin(), logs.end(), min_log) == logs.end()) {
    return Status::Corruption("MANIFEST names a missing WAL, so edits were lost",
                              LogFileName(dbname_, min_log));
  }

  std::sort(logs.begin(), logs.end());
  SequenceNumber max_sequence = 0;
  for (size_t i = 0; i < logs.size(); i++) {
    s = RecoverLogFile(logs[i], i == logs.size() - 1, save_manifest, edit, &max_sequence);
    if (!s.ok()) return s;
    // The log file's number is used; later files get larger numbers.
    versions_->MarkFileNumberUsed(logs[i]);
  }
  if (versions_->LastSequence() < max_sequence) versions_->SetLastSequence(max_sequence);
  return Status::OK();
}

namespace {
struct LogReporter : public log::Reader::Reporter {
  Env* env;
  std::string fname;
  Status* status;  // nullptr: ignore errors (not paranoid)
  uint64_t dropped_bytes = 0;
  void Corruption(size_t bytes, const Status& s) override {
    dropped_bytes += bytes;
    if (status != nullptr && status->ok()) *status = Status::Corruption(fname, s.ToString());
  }
};
}  // namespace

Status DBImpl::RecoverLogFile(uint64_t log_number, bool last_log, bool* save_manifest,
                              VersionEdit* edit, SequenceNumber* max_sequence) {
  const std::string fname = LogFileName(dbname_, log_number);
  std::unique_ptr<SequentialFile> file;
  Status status = env_->NewSequentialFile(fname, &file);
  if (!status.ok()) return status;

  LogReporter reporter;
  reporter.env = env_;
  reporter.fname = fname;
  reporter.status = options_.paranoid_checks ? &status : nullptr;
  log::Reader reader(file.get(), &reporter, /*checksum=*/true, /*initial_offset=*/0);
  std::string scratch;
  Slice record;
  WriteBatch batch;
  MemTable* mem = nullptr;
  (void)last_log;

  auto flush_mem = [&]() -> Status {
    FileMetaData meta;
    meta.number = versions_->NewFileNumber();
    std::unique_ptr<Iterator> iter(mem->NewIterator());
    // No snapshot exists during recovery.
    Status s = BuildTable(dbname_, env_, table_options_, user_comparator(), {}, iter.get(), &meta);
    if (s.ok() && meta.file_size > 0) {
      edit->AddFile(0, meta);
      stats_.flushes++;
      stats_.flush_bytes_written += meta.file_size;
      stats_.levels[0].bytes_written += meta.file_size;
    }
    mem->Unref();
    mem = nullptr;
    *save_manifest = true;
    return s;
  };

  while (reader.ReadRecord(&record, &scratch) && status.ok()) {
    if (record.size() < WriteBatchInternal::kHeaderSize) {
      reporter.Corruption(record.size(), Status::Corruption("log record too small"));
      continue;
    }
    status = WriteBatchInternal::SetContents(&batch, record);
    if (!status.ok()) break;
    if (mem == nullptr) {
      mem = NewMemTable();
      mem->Ref();
    }
    status = WriteBatchInternal::InsertInto(&batch, mem);
    if (!status.ok()) {
      if (!options_.paranoid_checks) {
        // A batch whose checksum matched but whose contents do not parse:
        // report it as lost bytes, as LevelDB does, and go on.
        reporter.Corruption(record.size(), status);
        status = Status::OK();
      }
      if (!status.ok()) break;
    }
    const SequenceNumber last_seq =
        WriteBatchInternal::Sequence(&batch) + WriteBatchInternal::Count(&batch) - 1;
    if (last_seq > *max_sequence) *max_sequence = last_seq;
    if (mem->ApproximateMemoryUsage() > options_.write_buffer_size) {
      status = flush_mem();
      if (!status.ok()) break;
    }
  }
  if (status.ok() && mem != nullptr) status = flush_mem();
  if (mem != nullptr) mem->Unref();
  return status;
}

}  // namespace accelkv
