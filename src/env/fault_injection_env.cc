#include "env/fault_injection_env.h"

#include <algorithm>
#include <cstring>

namespace accelkv {
namespace {

std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// The directory part of a path: "a/b/c" -> "a/b", "/c" -> "/", "c" -> ".".
std::string Dirname(const std::string& path) {
  size_t pos = path.rfind('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

class FaultSequentialFile final : public SequentialFile {
 public:
  FaultSequentialFile(FaultInjectionEnv* env, std::string fname,
                      std::unique_ptr<SequentialFile> base)
      : env_(env), fname_(std::move(fname)), base_(std::move(base)) {}

  Status Read(size_t n, Slice* result, char* scratch) override {
    Status s = env_->CheckOp(FaultKind::kRead, fname_, /*mutates=*/false);
    if (!s.ok()) {
      *result = Slice(scratch, 0);
      return s;
    }
    return base_->Read(n, result, scratch);
  }

  Status Skip(uint64_t n) override {
    Status s = env_->CheckOp(FaultKind::kRead, fname_, /*mutates=*/false);
    if (!s.ok()) return s;
    return base_->Skip(n);
  }

 private:
  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<SequentialFile> base_;
};

class FaultRandomAccessFile final : public RandomAccessFile {
 public:
  FaultRandomAccessFile(FaultInjectionEnv* env, std::string fname,
                        std::unique_ptr<RandomAccessFile> base)
      : env_(env), fname_(std::move(fname)), base_(std::move(base)) {}

  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    Status s = env_->CheckOp(FaultKind::kRead, fname_, /*mutates=*/false);
    if (!s.ok()) {
      *result = Slice(scratch, 0);
      return s;
    }
    return base_->Read(offset, n, result, scratch);
  }

 private:
  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<RandomAccessFile> base_;
};

class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionEnv* env, std::string fname, std::unique_ptr<WritableFile> base,
                    std::shared_ptr<FaultInjectionEnv::Tracked> tracked, uint64_t initial_size)
      : env_(env),
        fname_(std::move(fname)),
        base_(std::move(base)),
        tracked_(std::move(tracked)),
        size_(initial_size) {}

  Status Append(const Slice& data) override {
    Status s = env_->CheckOp(FaultKind::kWrite, fname_, /*mutates=*/true);
    if (s.ok()) s = base_->Append(data);
    if (s.ok()) size_ += data.size();
    return s;
  }

  Status Flush() override {
    Status s = env_->CheckOp(FaultKind::kWrite, fname_, /*mutates=*/true);
    if (s.ok()) s = base_->Flush();
    return s;
  }

  // The file's size is `size` from here; the bytes count as written (for
  // the crash model) once Sync has succeeded after every WriteAt.
  Status PrepareWriteAt(uint64_t size) override {
    Status s = env_->CheckOp(FaultKind::kWrite, fname_, /*mutates=*/true);
    if (s.ok()) s = base_->PrepareWriteAt(size);
    if (s.ok()) size_ = size;
    return s;
  }

  Status WriteAt(uint64_t offset, const Slice& data) override {
    Status s = env_->CheckOp(FaultKind::kWrite, fname_, /*mutates=*/true);
    if (s.ok()) s = base_->WriteAt(offset, data);
    return s;
  }

  Status Sync() override {
    Status s = env_->CheckOp(FaultKind::kSync, fname_, /*mutates=*/true);
    if (s.ok()) s = base_->Sync();
    if (s.ok()) env_->RecordSync(tracked_, size_);
    return s;
  }

  Status Close() override { return base_->Close(); }

 private:
  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<WritableFile> base_;
  const std::shared_ptr<FaultInjectionEnv::Tracked> tracked_;
  uint64_t size_;  // bytes in the file as written through this writer
};

}  // namespace

const char* FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kWrite:
      return "write";
    case FaultKind::kSync:
      return "sync";
    case FaultKind::kRead:
      return "read";
    case FaultKind::kOpenReadable:
      return "open-readable";
    case FaultKind::kOpenWritable:
      return "open-writable";
    case FaultKind::kRename:
      return "rename";
    case FaultKind::kRemove:
      return "remove";
    case FaultKind::kSyncDir:
      return "syncdir";
  }
  return "unknown";
}

FaultInjectionEnv::FaultInjectionEnv(Env* base) : base_(base) {}
FaultInjectionEnv::~FaultInjectionEnv() = default;

// --- error injection ---------------------------------------------------------

void FaultInjectionEnv::SetFailure(FaultKind kind, int64_t after_n_ops, bool one_shot,
                                   const std::string& path_filter) {
  std::lock_guard<std::mutex> l(mu_);
  Rule& r = rules_[static_cast<int>(kind)];
  r.armed = true;
  r.remaining_ok = std::max<int64_t>(after_n_ops, 0);
  r.one_shot = one_shot;
  r.filter = path_filter;
}

void FaultInjectionEnv::ClearFailure(FaultKind kind) {
  std::lock_guard<std::mutex> l(mu_);
  rules_[static_cast<int>(kind)] = Rule();
}

void FaultInjectionEnv::ClearFailures() {
  std::lock_guard<std::mutex> l(mu_);
  for (Rule& r : rules_) r = Rule();
}

uint64_t FaultInjectionEnv::OpCount(FaultKind kind) const {
  std::lock_guard<std::mutex> l(mu_);
  return ops_[static_cast<int>(kind)];
}

uint64_t FaultInjectionEnv::InjectedCount(FaultKind kind) const {
  std::lock_guard<std::mutex> l(mu_);
  return injected_[static_cast<int>(kind)];
}

void FaultInjectionEnv::ResetCounters() {
  std::lock_guard<std::mutex> l(mu_);
  std::fill(std::begin(ops_), std::end(ops_), 0);
  std::fill(std::begin(injected_), std::end(injected_), 0);
}

Status FaultInjectionEnv::CheckOp(FaultKind kind, const std::string& path, bool mutates,
                                  const std::string& path2) {
  std::lock_guard<std::mutex> l(mu_);
  const int k = static_cast<int>(kind);
  ops_[k]++;
  if (mutates && !active_) return Status::IOError("filesystem inactive", path);
  Rule& r = rules_[k];
  if (!r.armed) return Status::OK();
  const bool matches = r.filter.empty() || path.find(r.filter) != std::string::npos ||
                       (!path2.empty() && path2.find(r.filter) != std::string::npos);
  if (!matches) return Status::OK();
  if (r.remaining_ok > 0) {
    r.remaining_ok--;
    return Status::OK();
  }
  injected_[k]++;
  if (r.one_shot) r = Rule();
  return Status::IOError(std::string("injected fault ") + FaultKindName(kind), path);
}

Status FaultInjectionEnv::CheckActive(const std::string& path) const {
  std::lock_guard<std::mutex> l(mu_);
  if (!active_) return Status::IOError("filesystem inactive", path);
  return Status::OK();
}

// --- crash simulation --------------------------------------------------------

void FaultInjectionEnv::SetFilesystemActive(bool active) {
  std::lock_guard<std::mutex> l(mu_);
  active_ = active;
}

bool FaultInjectionEnv::IsFilesystemActive() const {
  std::lock_guard<std::mutex> l(mu_);
  return active_;
}

void FaultInjectionEnv::RecordSync(const std::shared_ptr<Tracked>& t, uint64_t size) {
  std::lock_guard<std::mutex> l(mu_);
  t->synced_size = std::max(t->synced_size, size);
}

bool FaultInjectionEnv::GetTrackedState(const std::string& fname, uint64_t* synced_size,
                                        bool* entry_durable) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = tracked_.find(fname);
  if (it == tracked_.end()) return false;
  *synced_size = it->second->synced_size;
  *entry_durable = it->second->entry_durable;
  return true;
}

Status FaultInjectionEnv::ReadDurable(const std::string& path, const Tracked* t, std::string* out) {
  out->clear();
  uint64_t size = 0;
  Status s = base_->GetFileSize(path, &size);
  if (!s.ok()) return s;
  if (t != nullptr) size = std::min(size, t->synced_size);
  std::unique_ptr<SequentialFile> file;
  s = base_->NewSequentialFile(path, &file);
  if (!s.ok()) return s;
  out->resize(size);
  Slice got;
  s = file->Read(size, &got, out->data());
  if (!s.ok()) return s;
  if (got.size() != size) return Status::IOError(path, "file shrank while reading");
  if (got.data() != out->data()) std::memcpy(out->data(), got.data(), size);
  return Status::OK();
}

Status FaultInjectionEnv::RewriteFile(const std::string& path, const Slice& data) {
  std::unique_ptr<WritableFile> file;
  Status s = base_->NewWritableFile(path, &file);
  if (!s.ok()) return s;
  s = file->Append(data);
  if (s.ok()) s = file->Sync();
  Status c = file->Close();
  return s.ok() ? c : s;
}

Status FaultInjectionEnv::DropUnsyncedData() {
  std::lock_guard<std::mutex> l(mu_);
  Status result;
  for (const auto& [path, t] : tracked_) {
    uint64_t size = 0;
    Status s = base_->GetFileSize(path, &size);
    if (s.IsNotFound()) continue;  // removed behind our back
    if (s.ok() && size > t->synced_size) {
      std::string durable;
      s = ReadDurable(path, t.get(), &durable);
      if (s.ok()) s = RewriteFile(path, durable);
    }
    if (!s.ok() && result.ok()) result = s;
  }
  return result;
}

Status FaultInjectionEnv::RemoveFilesCreatedAfterLastDirSync() {
  std::lock_guard<std::mutex> l(mu_);
  Status result;
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    if (it->second->entry_durable) {
      ++it;
      continue;
    }
    Status s = base_->RemoveFile(it->first);
    if (!s.ok() && !s.IsNotFound() && result.ok()) result = s;
    it = tracked_.erase(it);
  }
  for (const auto& [path, content] : pending_restore_) {
    Status s = RewriteFile(path, content);
    if (!s.ok() && result.ok()) result = s;
    tracked_.erase(path);  // restored content is durable
  }
  pending_restore_.clear();
  return result;
}

Status FaultInjectionEnv::SimulateCrash() {
  Status s = DropUnsyncedData();
  Status r = RemoveFilesCreatedAfterLastDirSync();
  ResetState();
  return s.ok() ? r : s;
}

void FaultInjectionEnv::ResetState() {
  std::lock_guard<std::mutex> l(mu_);
  tracked_.clear();
  pending_restore_.clear();
}

// --- Env ---------------------------------------------------------------------

Status FaultInjectionEnv::NewSequentialFile(const std::string& fname,
                                            std::unique_ptr<SequentialFile>* result) {
  result->reset();
  Status s = CheckOp(FaultKind::kOpenReadable, fname, /*mutates=*/false);
  if (!s.ok()) return s;
  std::unique_ptr<SequentialFile> base;
  s = base_->NewSequentialFile(fname, &base);
  if (s.ok()) *result = std::make_unique<FaultSequentialFile>(this, fname, std::move(base));
  return s;
}

Status FaultInjectionEnv::NewRandomAccessFile(const std::string& fname,
                                              std::unique_ptr<RandomAccessFile>* result) {
  return NewRandomAccessFile(fname, RandomAccessFileOptions(), result);
}

Status FaultInjectionEnv::NewRandomAccessFile(const std::string& fname,
                                              const RandomAccessFileOptions& options,
                                              std::unique_ptr<RandomAccessFile>* result) {
  result->reset();
  Status s = CheckOp(FaultKind::kOpenReadable, fname, /*mutates=*/false);
  if (!s.ok()) return s;
  std::unique_ptr<RandomAccessFile> base;
  s = base_->NewRandomAccessFile(fname, options, &base);
  if (s.ok()) *result = std::make_unique<FaultRandomAccessFile>(this, fname, std::move(base));
  return s;
}

Status FaultInjectionEnv::NewWritableFile(const std::string& fname,
                                          std::unique_ptr<WritableFile>* result) {
  return OpenWritable(fname, /*append=*/false, WritableFileOptions(), result);
}

Status FaultInjectionEnv::NewWritableFile(const std::string& fname,
                                          const WritableFileOptions& options,
                                          std::unique_ptr<WritableFile>* result) {
  return OpenWritable(fname, /*append=*/false, options, result);
}

Status FaultInjectionEnv::NewAppendableFile(const std::string& fname,
                                            std::unique_ptr<WritableFile>* result) {
  return OpenWritable(fname, /*append=*/true, WritableFileOptions(), result);
}

Status FaultInjectionEnv::OpenWritable(const std::string& fname, bool append,
                                       const WritableFileOptions& options,
                                       std::unique_ptr<WritableFile>* result) {
  result->reset();
  Status s = CheckOp(FaultKind::kOpenWritable, fname, /*mutates=*/true);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  const bool existed = base_->FileExists(fname);
  std::unique_ptr<WritableFile> base;
  s = append ? base_->NewAppendableFile(fname, &base)
             : base_->NewWritableFile(fname, options, &base);
  if (!s.ok()) return s;
  uint64_t initial_size = 0;
  if (append) {
    s = base_->GetFileSize(fname, &initial_size);
    if (!s.ok()) return s;
  }
  auto it = tracked_.find(fname);
  std::shared_ptr<Tracked> t;
  if (append && it != tracked_.end()) {
    t = it->second;
  } else {
    t = std::make_shared<Tracked>();
    // A name that existed keeps its entry state (untracked: durable).
    t->entry_durable = existed && (it == tracked_.end() || it->second->entry_durable);
    t->synced_size = (append && existed) ? initial_size : 0;
    tracked_[fname] = t;
  }
  *result =
      std::make_unique<FaultWritableFile>(this, fname, std::move(base), std::move(t), initial_size);
  return Status::OK();
}

bool FaultInjectionEnv::FileExists(const std::string& fname) { return base_->FileExists(fname); }

Status FaultInjectionEnv::GetChildren(const std::string& dir, std::vector<std::string>* result) {
  return base_->GetChildren(dir, result);
}

Status FaultInjectionEnv::RemoveFile(const std::string& fname) {
  Status s = CheckOp(FaultKind::kRemove, fname, /*mutates=*/true);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  s = base_->RemoveFile(fname);
  if (s.ok()) tracked_.erase(fname);
  return s;
}

Status FaultInjectionEnv::CreateDir(const std::string& dirname) {
  Status s = CheckActive(dirname);
  return s.ok() ? base_->CreateDir(dirname) : s;
}

Status FaultInjectionEnv::RemoveDir(const std::string& dirname) {
  Status s = CheckActive(dirname);
  return s.ok() ? base_->RemoveDir(dirname) : s;
}

Status FaultInjectionEnv::GetFileSize(const std::string& fname, uint64_t* file_size) {
  return base_->GetFileSize(fname, file_size);
}

Status FaultInjectionEnv::RenameFile(const std::string& src, const std::string& target) {
  Status s = CheckOp(FaultKind::kRename, src, /*mutates=*/true, target);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  if (src == target) return base_->RenameFile(src, target);
  auto src_it = tracked_.find(src);
  auto tgt_it = tracked_.find(target);
  Tracked* src_t = src_it == tracked_.end() ? nullptr : src_it->second.get();
  Tracked* tgt_t = tgt_it == tracked_.end() ? nullptr : tgt_it->second.get();
  // Durable content that a crash before SyncDir brings back under each name.
  std::string src_content, tgt_content;
  bool save_src = false, save_tgt = false;
  if ((src_t == nullptr || src_t->entry_durable) && pending_restore_.count(src) == 0 &&
      base_->FileExists(src)) {
    s = ReadDurable(src, src_t, &src_content);
    if (!s.ok()) return s;
    save_src = true;
  }
  if ((tgt_t == nullptr || tgt_t->entry_durable) && pending_restore_.count(target) == 0 &&
      base_->FileExists(target)) {
    s = ReadDurable(target, tgt_t, &tgt_content);
    if (!s.ok()) return s;
    save_tgt = true;
  }
  std::shared_ptr<Tracked> moved;
  if (src_t != nullptr) {
    moved = src_it->second;
  } else {
    moved = std::make_shared<Tracked>();
    s = base_->GetFileSize(src, &moved->synced_size);  // untracked: all durable
    if (!s.ok()) return s;
  }
  s = base_->RenameFile(src, target);
  if (!s.ok()) return s;
  if (save_src) pending_restore_[src] = std::move(src_content);
  if (save_tgt) pending_restore_[target] = std::move(tgt_content);
  moved->entry_durable = false;
  tracked_.erase(src);
  tracked_[target] = std::move(moved);
  return Status::OK();
}

Status FaultInjectionEnv::SyncDir(const std::string& dirname) {
  Status s = CheckOp(FaultKind::kSyncDir, dirname, /*mutates=*/true);
  if (!s.ok()) return s;
  s = base_->SyncDir(dirname);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  const std::string dir = StripTrailingSlashes(dirname);
  for (auto& [path, t] : tracked_) {
    if (Dirname(path) == dir) t->entry_durable = true;
  }
  for (auto it = pending_restore_.begin(); it != pending_restore_.end();) {
    it = Dirname(it->first) == dir ? pending_restore_.erase(it) : std::next(it);
  }
  return Status::OK();
}

Status FaultInjectionEnv::LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) {
  return base_->LockFile(fname, lock);
}

Status FaultInjectionEnv::UnlockFile(std::unique_ptr<FileLock> lock) {
  return base_->UnlockFile(std::move(lock));
}

uint64_t FaultInjectionEnv::NowMicros() { return base_->NowMicros(); }

void FaultInjectionEnv::SleepForMicroseconds(int micros) { base_->SleepForMicroseconds(micros); }

}  // namespace accelkv
