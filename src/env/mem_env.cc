// MemEnv: NewMemEnv(), a whole file system kept in memory.
//
// Model:
// - A file is a reference-counted byte string (FileState). The name map and
//   every open file object hold references, so a reader opened before
//   RemoveFile or RenameFile keeps reading the old bytes, as on POSIX.
// - NewWritableFile on an existing name truncates that same FileState (as
//   O_TRUNC does), so open readers see the truncation.
// - Directories: a directory exists if CreateDir made it or if some file
//   path lies under it. Creating a file does not require its directory to
//   exist. GetChildren lists the direct children (files and subdirectories,
//   each name once, without "." and ".."); NotFound if the directory does
//   not exist. RemoveDir fails on a non-empty directory.
// - Nothing is lost at any point: Sync and SyncDir only check arguments
//   (crash simulation is FaultInjectionEnv's job).
// - Clocks delegate to the base Env.
//
// - File bytes live in chunks (MemEnvOptions::chunk_bytes, 64 KiB, from
//   MemEnvOptions::memory or the heap); those of removed or truncated files
//   are kept (up to MemEnvOptions::max_free_bytes, 512 MiB) for later
//   appends (ChunkPool).
// - RandomAccessFile::Lend hands out the chunks' parts of a range in place,
//   WritableFile::LendPrepared those of a prepared file, for writing.
//
// Thread safety: the Env is safe for concurrent use (one mutex over the name
// maps, one per FileState over its bytes, shared by its reads and
// positioned writes, one over the chunk pool).
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <shared_mutex>
#include <vector>

#include "accelkv/env.h"
#include "util/streaming_copy.h"
#include "util/thread_annotations.h"

namespace accelkv {
namespace {

// One chunk of a file's bytes, from the Env's HostMemory (or the heap),
// owned by its file's FileState or by the ChunkPool.
using Chunk = char*;

// Copies one chunk's part of a read or write of `total` bytes. A large
// request (the GPU executor's pieces of whole tables) goes by streaming
// stores: its bytes would not stay in the caches for the caller, and on the
// GPU machine the compact job's writers' tail got 14-28% shorter from 128 B
// values up and its CPU time 1-14% lower (util/streaming_copy.h). Small ones (a table's
// blocks, the log's records) by memcpy, as before, cached for the reader.
void CopyPiece(char* dst, const char* src, size_t n, size_t total) {
  if (total >= kStreamingCopyMinBytes) {
    StreamingCopy(dst, src, n);
  } else {
    std::memcpy(dst, src, n);
  }
}

// The chunks of every file of the Env: made from options.memory (the heap
// without one), and those of removed and truncated files kept for the next
// appends of any file, up to options.max_free_bytes (512 MiB). Without it the
// allocator hands freed chunks back to the kernel (glibc trims its heaps)
// and every later append of a large file pays a page fault per 4 KiB to
// zero fresh pages: the compact benchmark writes and removes 150-230 MB per
// run (and page-locked memory is slow to make).
class ChunkPool {
 public:
  explicit ChunkPool(const MemEnvOptions& options)
      : chunk_size_(std::max<size_t>(options.chunk_bytes, 4096)),
        max_free_(std::max<size_t>(1, options.max_free_bytes / chunk_size_)),
        memory_(options.memory) {}
  ~ChunkPool() {
    for (Chunk c : free_) Release(c);
  }
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  size_t chunk_size() const { return chunk_size_; }

  Chunk Get() EXCLUDES(mu_) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!free_.empty()) {
        Chunk c = free_.back();
        free_.pop_back();
        return c;
      }
    }
    // Not zeroed: a file's bytes are written before they are read (Read
    // stops at the file's size), so zeroing a fresh chunk only added a
    // memset of 64 KiB that the appends then overwrote.
    if (memory_ != nullptr) return static_cast<char*>(memory_->Allocate(chunk_size_));
    return static_cast<char*>(::operator new[](chunk_size_, std::align_val_t{64}));
  }
  void Put(std::vector<Chunk>* chunks) EXCLUDES(mu_) {
    std::lock_guard<std::mutex> l(mu_);
    for (Chunk c : *chunks) {
      if (free_.size() < max_free_) {
        free_.push_back(c);
      } else {
        Release(c);  // over the limit
      }
    }
    chunks->clear();
  }

 private:
  void Release(Chunk c) const {
    if (memory_ != nullptr) {
      memory_->Free(c, chunk_size_);
    } else {
      ::operator delete[](c, std::align_val_t{64});
    }
  }

  const size_t chunk_size_;
  const size_t max_free_;  // chunks
  const std::shared_ptr<HostMemory> memory_;
  std::mutex mu_;
  std::vector<Chunk> free_ GUARDED_BY(mu_);
};

// A file's bytes in fixed-size chunks (as LevelDB's memenv): an append never
// moves what is already stored, so large files grow without regrowth copies.
// Chunks come from and go back to the Env's ChunkPool.
class FileState {
 public:
  explicit FileState(std::shared_ptr<ChunkPool> pool)
      : pool_(std::move(pool)), chunk_size_(pool_->chunk_size()) {}
  ~FileState() {
    std::unique_lock<std::shared_mutex> l(mu_);
    pool_->Put(&chunks_);
  }
  FileState(const FileState&) = delete;
  FileState& operator=(const FileState&) = delete;

  uint64_t Size() const EXCLUDES(mu_) {
    std::shared_lock<std::shared_mutex> l(mu_);
    return size_;
  }
  void Truncate() EXCLUDES(mu_) {
    std::unique_lock<std::shared_mutex> l(mu_);
    pool_->Put(&chunks_);
    size_ = 0;
  }
  void Append(const Slice& s) EXCLUDES(mu_) {
    std::unique_lock<std::shared_mutex> l(mu_);
    const char* src = s.data();
    size_t left = s.size();
    while (left > 0) {
      const size_t used = static_cast<size_t>(size_ % chunk_size_);
      if (used == 0 && size_ / chunk_size_ == chunks_.size()) chunks_.push_back(pool_->Get());
      const size_t n = std::min(left, chunk_size_ - used);
      CopyPiece(chunks_.back() + used, src, n, s.size());
      src += n;
      left -= n;
      size_ += n;
    }
  }
  // Makes an empty file `size` bytes long (unspecified bytes) for WriteAt;
  // false if it is not empty.
  bool Grow(uint64_t size) EXCLUDES(mu_) {
    std::unique_lock<std::shared_mutex> l(mu_);
    if (size_ != 0) return false;
    const uint64_t n = (size + chunk_size_ - 1) / chunk_size_;
    for (uint64_t i = chunks_.size(); i < n; ++i) chunks_.push_back(pool_->Get());
    size_ = size;
    return true;
  }
  // Copies s to offset; false if it does not fit in the file. Under the
  // shared lock: writes of disjoint ranges run at once, and the chunks stay
  // put (only Append, Grow and Truncate, exclusive, change them).
  bool WriteAt(uint64_t offset, const Slice& s) EXCLUDES(mu_) {
    std::shared_lock<std::shared_mutex> l(mu_);
    if (offset > size_ || s.size() > size_ - offset) return false;
    ForEachPiece(offset, s.size(), [&](char* chunk, size_t done, size_t m) {
      CopyPiece(chunk, s.data() + done, m, s.size());
    });
    return true;
  }
  // The chunks' parts of [offset, offset + n), in place; false if the
  // range passes the end of the file. They stay put until Truncate (an
  // append fills only bytes past the file's end).
  bool Lend(uint64_t offset, uint64_t n, std::vector<Slice>* pieces) const EXCLUDES(mu_) {
    pieces->clear();
    std::shared_lock<std::shared_mutex> l(mu_);
    if (offset > size_ || n > size_ - offset) return false;
    ForEachPiece(offset, static_cast<size_t>(n),
                 [&](const char* chunk, size_t, size_t m) { pieces->emplace_back(chunk, m); });
    return true;
  }
  // Every chunk's part of the file, in place, for writing (LendPrepared).
  void LendAll(std::vector<WritablePiece>* pieces) EXCLUDES(mu_) {
    pieces->clear();
    std::shared_lock<std::shared_mutex> l(mu_);
    ForEachPiece(0, static_cast<size_t>(size_), [&](char* chunk, size_t, size_t m) {
      pieces->push_back(WritablePiece{chunk, m});
    });
  }
  // Copies up to n bytes at offset into scratch; *result = the bytes read.
  // Reads share the lock with each other and with WriteAt.
  void Read(uint64_t offset, size_t n, Slice* result, char* scratch) const EXCLUDES(mu_) {
    std::shared_lock<std::shared_mutex> l(mu_);
    if (offset >= size_) {
      *result = Slice(scratch, 0);
      return;
    }
    const size_t len = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
    ForEachPiece(offset, len, [&](const char* chunk, size_t done, size_t m) {
      CopyPiece(scratch + done, chunk, m, len);
    });
    *result = Slice(scratch, len);
  }

 private:
  // Calls fn(chunk address, bytes before it in the range, bytes) for each
  // chunk's part of [offset, offset + len), which lies inside the file.
  template <typename Fn>
  void ForEachPiece(uint64_t offset, size_t len, Fn&& fn) const REQUIRES(mu_) {
    size_t done = 0;
    while (done < len) {
      const uint64_t at = offset + done;
      const size_t in_chunk = static_cast<size_t>(at % chunk_size_);
      const size_t m = std::min(len - done, chunk_size_ - in_chunk);
      fn(chunks_[static_cast<size_t>(at / chunk_size_)] + in_chunk, done, m);
      done += m;
    }
  }

  const std::shared_ptr<ChunkPool> pool_;
  const size_t chunk_size_;
  mutable std::shared_mutex mu_;
  std::vector<Chunk> chunks_ GUARDED_BY(mu_);
  uint64_t size_ GUARDED_BY(mu_) = 0;
};

using FileRef = std::shared_ptr<FileState>;

class MemSequentialFile final : public SequentialFile {
 public:
  explicit MemSequentialFile(FileRef file) : file_(std::move(file)) {}
  Status Read(size_t n, Slice* result, char* scratch) override {
    file_->Read(pos_, n, result, scratch);
    pos_ += result->size();
    return Status::OK();
  }
  Status Skip(uint64_t n) override {
    pos_ = std::min(pos_ + n, std::max(pos_, file_->Size()));
    return Status::OK();
  }

 private:
  FileRef file_;
  uint64_t pos_ = 0;
};

class MemRandomAccessFile final : public RandomAccessFile {
 public:
  explicit MemRandomAccessFile(FileRef file) : file_(std::move(file)) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    file_->Read(offset, n, result, scratch);
    return Status::OK();
  }
  Status Lend(uint64_t offset, uint64_t n, std::vector<Slice>* pieces) const override {
    if (!file_->Lend(offset, n, pieces)) {
      return Status::InvalidArgument("lend past the end of the file");
    }
    return Status::OK();
  }

 private:
  FileRef file_;
};

class MemWritableFile final : public WritableFile {
 public:
  MemWritableFile(std::string fname, FileRef file)
      : fname_(std::move(fname)), file_(std::move(file)) {}
  Status Append(const Slice& data) override {
    if (file_ == nullptr) return Status::IOError(fname_, "append to closed file");
    if (positioned_) return Status::InvalidArgument(fname_, "append after PrepareWriteAt");
    file_->Append(data);
    return Status::OK();
  }
  Status PrepareWriteAt(uint64_t size) override {
    if (file_ == nullptr) return Status::IOError(fname_, "PrepareWriteAt on closed file");
    if (positioned_ || !file_->Grow(size)) {
      return Status::InvalidArgument(fname_, "PrepareWriteAt on a file not empty");
    }
    positioned_ = true;
    return Status::OK();
  }
  Status WriteAt(uint64_t offset, const Slice& data) override {
    if (file_ == nullptr) return Status::IOError(fname_, "WriteAt on closed file");
    if (!positioned_) return Status::InvalidArgument(fname_, "WriteAt before PrepareWriteAt");
    if (!file_->WriteAt(offset, data)) {
      return Status::InvalidArgument(fname_, "WriteAt past the prepared size");
    }
    return Status::OK();
  }
  Status LendPrepared(std::vector<WritablePiece>* pieces) override {
    pieces->clear();
    if (file_ == nullptr) return Status::IOError(fname_, "LendPrepared on closed file");
    if (!positioned_) return Status::InvalidArgument(fname_, "LendPrepared before PrepareWriteAt");
    file_->LendAll(pieces);
    return Status::OK();
  }
  Status Flush() override { return Check("flush of closed file"); }
  Status Sync() override { return Check("sync of closed file"); }
  Status Close() override {
    file_.reset();
    return Status::OK();
  }

 private:
  Status Check(const char* what) const {
    return file_ == nullptr ? Status::IOError(fname_, what) : Status::OK();
  }
  const std::string fname_;
  FileRef file_;             // nullptr once closed
  bool positioned_ = false;  // PrepareWriteAt succeeded
};

class MemEnv;

class MemFileLock final : public FileLock {
 public:
  MemFileLock(MemEnv* env, std::string fname) : env_(env), fname_(std::move(fname)) {}
  ~MemFileLock() override;
  const std::string& fname() const { return fname_; }

 private:
  MemEnv* const env_;
  const std::string fname_;
};

// "a/b/" and "a/b" name the same directory.
std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

class MemEnv final : public Env {
 public:
  using Env::NewRandomAccessFile;  // options are ignored: files are already in memory
  using Env::NewWritableFile;      // likewise: no direct I/O in memory
  MemEnv(Env* base, const MemEnvOptions& options)
      : base_(base), pool_(std::make_shared<ChunkPool>(options)) {}

  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override {
    result->reset();
    FileRef f = Find(fname);
    if (f == nullptr) return Status::NotFound(fname, "no such file");
    *result = std::make_unique<MemSequentialFile>(std::move(f));
    return Status::OK();
  }

  Status NewRandomAccessFile(const std::string& fname,
                             std::unique_ptr<RandomAccessFile>* result) override {
    result->reset();
    FileRef f = Find(fname);
    if (f == nullptr) return Status::NotFound(fname, "no such file");
    *result = std::make_unique<MemRandomAccessFile>(std::move(f));
    return Status::OK();
  }

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result) override {
    return OpenWritable(fname, /*truncate=*/true, result);
  }

  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override {
    return OpenWritable(fname, /*truncate=*/false, result);
  }

  bool FileExists(const std::string& fname) override {
    std::lock_guard<std::mutex> l(mu_);
    return files_.count(fname) > 0 || DirExistsLocked(StripTrailingSlashes(fname));
  }

  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override {
    result->clear();
    std::lock_guard<std::mutex> l(mu_);
    const std::string d = StripTrailingSlashes(dir);
    if (!DirExistsLocked(d)) return Status::NotFound(dir, "no such directory");
    const std::string prefix = d + "/";
    std::set<std::string> names;
    auto collect = [&](const std::string& path) {
      if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0) {
        std::string rest = path.substr(prefix.size());
        names.insert(rest.substr(0, rest.find('/')));
      }
    };
    for (const auto& [path, file] : files_) collect(path);
    for (const auto& path : dirs_) collect(path);
    result->assign(names.begin(), names.end());
    return Status::OK();
  }

  Status RemoveFile(const std::string& fname) override {
    std::lock_guard<std::mutex> l(mu_);
    if (files_.erase(fname) == 0) return Status::NotFound(fname, "no such file");
    return Status::OK();
  }

  Status CreateDir(const std::string& dirname) override {
    std::lock_guard<std::mutex> l(mu_);
    const std::string d = StripTrailingSlashes(dirname);
    if (files_.count(d) > 0) return Status::IOError(dirname, "exists and is a file");
    dirs_.insert(d);
    return Status::OK();
  }

  Status RemoveDir(const std::string& dirname) override {
    std::lock_guard<std::mutex> l(mu_);
    const std::string d = StripTrailingSlashes(dirname);
    if (!DirExistsLocked(d)) return Status::NotFound(dirname, "no such directory");
    if (HasChildrenLocked(d)) return Status::IOError(dirname, "directory not empty");
    dirs_.erase(d);
    return Status::OK();
  }

  Status GetFileSize(const std::string& fname, uint64_t* file_size) override {
    *file_size = 0;
    FileRef f = Find(fname);
    if (f == nullptr) return Status::NotFound(fname, "no such file");
    *file_size = f->Size();
    return Status::OK();
  }

  Status RenameFile(const std::string& src, const std::string& target) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(src);
    if (it == files_.end()) return Status::NotFound(src, "no such file");
    if (src == target) return Status::OK();
    if (DirExistsLocked(target)) return Status::IOError(target, "is a directory");
    FileRef f = std::move(it->second);
    files_.erase(it);
    files_[target] = std::move(f);
    return Status::OK();
  }

  Status SyncDir(const std::string& dirname) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!DirExistsLocked(StripTrailingSlashes(dirname))) {
      return Status::NotFound(dirname, "no such directory");
    }
    return Status::OK();
  }

  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override {
    lock->reset();
    std::lock_guard<std::mutex> l(mu_);
    if (!locked_.insert(fname).second) return Status::Busy("lock " + fname, "already held");
    if (files_.count(fname) == 0) files_[fname] = std::make_shared<FileState>(pool_);
    *lock = std::make_unique<MemFileLock>(this, fname);
    return Status::OK();
  }

  Status UnlockFile(std::unique_ptr<FileLock> lock) override {
    if (lock == nullptr) return Status::InvalidArgument("UnlockFile: null lock");
    if (dynamic_cast<MemFileLock*>(lock.get()) == nullptr) {
      return Status::InvalidArgument("UnlockFile: not a MemEnv lock");
    }
    lock.reset();  // ~MemFileLock releases
    return Status::OK();
  }

  uint64_t NowMicros() override { return base_->NowMicros(); }
  void SleepForMicroseconds(int micros) override { base_->SleepForMicroseconds(micros); }

  void Unlock(const std::string& fname) EXCLUDES(mu_) {
    std::lock_guard<std::mutex> l(mu_);
    locked_.erase(fname);
  }

 private:
  FileRef Find(const std::string& fname) EXCLUDES(mu_) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(fname);
    return it == files_.end() ? nullptr : it->second;
  }

  Status OpenWritable(const std::string& fname, bool truncate,
                      std::unique_ptr<WritableFile>* result) EXCLUDES(mu_) {
    result->reset();
    std::lock_guard<std::mutex> l(mu_);
    if (DirExistsLocked(StripTrailingSlashes(fname))) {
      return Status::IOError(fname, "is a directory");
    }
    FileRef& f = files_[fname];
    if (f == nullptr) {
      f = std::make_shared<FileState>(pool_);
    } else if (truncate) {
      f->Truncate();
    }
    *result = std::make_unique<MemWritableFile>(fname, f);
    return Status::OK();
  }

  bool HasChildrenLocked(const std::string& d) const REQUIRES(mu_) {
    const std::string prefix = d + "/";
    auto under = [&](const std::string& p) { return p.compare(0, prefix.size(), prefix) == 0; };
    auto f = files_.lower_bound(prefix);
    if (f != files_.end() && under(f->first)) return true;
    auto s = dirs_.lower_bound(prefix);
    return s != dirs_.end() && under(*s);
  }

  bool DirExistsLocked(const std::string& d) const REQUIRES(mu_) {
    return dirs_.count(d) > 0 || HasChildrenLocked(d);
  }

  Env* const base_;
  const std::shared_ptr<ChunkPool> pool_;  // shared with the files, which may outlive the Env
  std::mutex mu_;
  std::map<std::string, FileRef> files_ GUARDED_BY(mu_);
  std::set<std::string> dirs_ GUARDED_BY(mu_);  // made by CreateDir
  std::set<std::string> locked_ GUARDED_BY(mu_);
};

MemFileLock::~MemFileLock() { env_->Unlock(fname_); }

}  // namespace

std::unique_ptr<Env> NewMemEnv(Env* base_env) { return NewMemEnv(base_env, MemEnvOptions()); }

std::unique_ptr<Env> NewMemEnv(Env* base_env, const MemEnvOptions& options) {
  return std::make_unique<MemEnv>(base_env, options);
}

}  // namespace accelkv
