// PosixEnv: Env::Default(), the process-wide Env over POSIX file descriptors.
//
// - SequentialFile reads with read(2).
// - RandomAccessFile reads with pread(2), or, when the caller asks for
//   use_mmap_reads, from a read-only mmap of the whole file while fewer than
//   DefaultMmapLimit() mappings are live (posix_random_access_file.h), or,
//   with use_direct_reads, with pread(2) on an O_DIRECT descriptor
//   (posix_direct_random_access_file.h; a file system that refuses O_DIRECT
//   gets the plain pread file). Read is safe for concurrent use in every
//   case (pread moves no shared offset).
// - WritableFile keeps a 64 KiB user-space buffer; Append copies into it and
//   writes through when the data does not fit. Flush hands the buffer to the
//   kernel with write(2); Sync = Flush + fdatasync(2). With use_mmap_writes
//   it appends into a shared mapping of the file instead
//   (posix_mmap_writable_file.h); with use_direct_writes it writes with
//   O_DIRECT (posix_direct_writable_file.h).
// - LockFile takes an fcntl(F_SETLK) write lock; fcntl locks are per process,
//   so a process-wide set of locked paths makes a second lock of the same
//   path from this process fail with Busy as well.
//
// Errors: Status::IOError(path, strerror(errno)); ENOENT becomes
// Status::NotFound(path, strerror(errno)), as in LevelDB.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "accelkv/env.h"
#include "env/posix_direct_random_access_file.h"
#include "env/posix_direct_writable_file.h"
#include "env/posix_io.h"
#include "env/posix_mmap_writable_file.h"
#include "env/posix_random_access_file.h"
#include "util/thread_annotations.h"

namespace accelkv {
namespace {

constexpr size_t kWritableBufferSize = 64 * 1024;

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Status Read(size_t n, Slice* result, char* scratch) override {
    return ReadFully(fname_, n, scratch, result,
                     [&](char* dst, size_t len, size_t) { return ::read(fd_, dst, len); });
  }

  Status Skip(uint64_t n) override {
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) == static_cast<off_t>(-1)) {
      return PosixError(fname_, errno);
    }
    return Status::OK();
  }

 private:
  const std::string fname_;
  const int fd_;
};

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) Close();  // errors are lost; callers that care call Close()
  }

  Status Append(const Slice& data) override {
    if (fd_ < 0) return Status::IOError(fname_, "append to closed file");
    if (positioned_) return Status::InvalidArgument(fname_, "append after PrepareWriteAt");
    const char* p = data.data();
    size_t n = data.size();
    size_t copy = std::min(n, kWritableBufferSize - pos_);
    std::memcpy(buf_ + pos_, p, copy);
    pos_ += copy;
    p += copy;
    n -= copy;
    if (n == 0) return Status::OK();
    // The buffer is full and more data remains.
    Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (n < kWritableBufferSize) {
      std::memcpy(buf_, p, n);
      pos_ = n;
      return Status::OK();
    }
    return WriteRaw(p, n);
  }

  Status Flush() override {
    if (fd_ < 0) return Status::IOError(fname_, "flush of closed file");
    return FlushBuffer();
  }

  Status Sync() override {
    if (fd_ < 0) return Status::IOError(fname_, "sync of closed file");
    Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (::fdatasync(fd_) != 0) return PosixError(fname_, errno);
    return Status::OK();
  }

  // ftruncate, then pwrite: disjoint pwrites of one file run at once. Not
  // for NewAppendableFile's files (O_APPEND).
  Status PrepareWriteAt(uint64_t size) override {
    if (fd_ < 0) return Status::IOError(fname_, "PrepareWriteAt on closed file");
    // Linux's pwrite appends at the end of an O_APPEND file, whatever the
    // offset (NewAppendableFile's files).
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0) return PosixError(fname_, errno);
    if ((flags & O_APPEND) != 0) return Status::NotSupported(fname_, "positioned writes");
    struct stat st;
    if (::fstat(fd_, &st) != 0) return PosixError(fname_, errno);
    if (positioned_ || pos_ != 0 || st.st_size != 0) {
      return Status::InvalidArgument(fname_, "PrepareWriteAt on a file not empty");
    }
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return PosixError(fname_, errno);
    positioned_ = true;
    prepared_size_ = size;
    return Status::OK();
  }

  Status WriteAt(uint64_t offset, const Slice& data) override {
    if (fd_ < 0) return Status::IOError(fname_, "WriteAt on closed file");
    if (!positioned_) return Status::InvalidArgument(fname_, "WriteAt before PrepareWriteAt");
    if (offset > prepared_size_ || data.size() > prepared_size_ - offset) {
      return Status::InvalidArgument(fname_, "WriteAt past the prepared size");
    }
    return WriteFully(fname_, data.data(), data.size(),
                      [&](const char* src, size_t len, size_t done) {
                        return ::pwrite(fd_, src, len, static_cast<off_t>(offset + done));
                      });
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    Status s = FlushBuffer();
    if (::close(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  Status FlushBuffer() {
    Status s = WriteRaw(buf_, pos_);
    pos_ = 0;
    return s;
  }

  Status WriteRaw(const char* p, size_t n) {
    return WriteFully(fname_, p, n, [this](const char* src, size_t len, size_t) {
      return ::write(fd_, src, len);
    });
  }

  const std::string fname_;
  int fd_;  // -1 once closed
  size_t pos_ = 0;
  bool positioned_ = false;  // PrepareWriteAt succeeded
  uint64_t prepared_size_ = 0;
  char buf_[kWritableBufferSize];
};

// Paths locked by this process; fcntl locks do not exclude the owning process.
class LockTable {
 public:
  bool Insert(const std::string& fname) EXCLUDES(mu_) {
    std::lock_guard<std::mutex> l(mu_);
    return locked_.insert(fname).second;
  }
  void Remove(const std::string& fname) EXCLUDES(mu_) {
    std::lock_guard<std::mutex> l(mu_);
    locked_.erase(fname);
  }

 private:
  std::mutex mu_;
  std::set<std::string> locked_ GUARDED_BY(mu_);
};

int LockOrUnlock(int fd, bool lock) {
  struct flock f;
  std::memset(&f, 0, sizeof(f));
  f.l_type = lock ? F_WRLCK : F_UNLCK;
  f.l_whence = SEEK_SET;
  f.l_start = 0;
  f.l_len = 0;  // the whole file
  return ::fcntl(fd, F_SETLK, &f);
}

// Releases the lock when destroyed (UnlockFile only adds error reporting).
class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(LockTable* table, std::string fname, int fd)
      : table_(table), fname_(std::move(fname)), fd_(fd) {}
  ~PosixFileLock() override { Release(); }

  Status Release() {
    if (fd_ < 0) return Status::OK();
    Status s;
    if (LockOrUnlock(fd_, false) != 0) s = PosixError("unlock " + fname_, errno);
    ::close(fd_);
    fd_ = -1;
    table_->Remove(fname_);
    return s;
  }

 private:
  LockTable* const table_;
  const std::string fname_;
  int fd_;
};

class PosixEnv final : public Env {
 public:
  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override {
    result->reset();
    int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(fname, errno);
    *result = std::make_unique<PosixSequentialFile>(fname, fd);
    return Status::OK();
  }

  Status NewRandomAccessFile(const std::string& fname,
                             std::unique_ptr<RandomAccessFile>* result) override {
    return NewPosixRandomAccessFile(fname, /*use_mmap=*/false, &mmap_limiter_, result);
  }

  Status NewRandomAccessFile(const std::string& fname, const RandomAccessFileOptions& options,
                             std::unique_ptr<RandomAccessFile>* result) override {
    if (options.use_direct_reads) {
      Status s = NewPosixDirectRandomAccessFile(fname, options.io_priority, result);
      if (!s.IsInvalidArgument()) return s;  // else: no O_DIRECT here, read buffered
      return NewPosixRandomAccessFile(fname, /*use_mmap=*/false, &mmap_limiter_, result);
    }
    return NewPosixRandomAccessFile(fname, options.use_mmap_reads, &mmap_limiter_, result);
  }

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result) override {
    return OpenWritable(fname, O_TRUNC, result);
  }

  Status NewWritableFile(const std::string& fname, const WritableFileOptions& options,
                         std::unique_ptr<WritableFile>* result) override {
    if (options.use_direct_writes) {
      Status s = NewPosixDirectWritableFile(fname, options.io_priority, result);
      if (!s.IsInvalidArgument()) return s;  // else: no O_DIRECT here, write buffered
    } else if (options.use_mmap_writes) {
      Status s = NewPosixMmapWritableFile(fname, result);
      if (!s.IsNotSupported()) return s;  // else: no shared writable mapping here, write buffered
    }
    return OpenWritable(fname, O_TRUNC, result);
  }

  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override {
    return OpenWritable(fname, O_APPEND, result);
  }

  bool FileExists(const std::string& fname) override { return ::access(fname.c_str(), F_OK) == 0; }

  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override {
    result->clear();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError(dir, errno);
    errno = 0;
    while (struct dirent* entry = ::readdir(d)) {
      if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) {
        result->emplace_back(entry->d_name);
      }
      errno = 0;
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) return PosixError(dir, err);
    return Status::OK();
  }

  Status RemoveFile(const std::string& fname) override {
    if (::unlink(fname.c_str()) != 0) return PosixError(fname, errno);
    return Status::OK();
  }

  Status CreateDir(const std::string& dirname) override {
    if (::mkdir(dirname.c_str(), 0755) == 0) return Status::OK();
    int err = errno;
    struct stat st;
    if (err == EEXIST && ::stat(dirname.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return Status::OK();
    }
    return PosixError(dirname, err);
  }

  Status RemoveDir(const std::string& dirname) override {
    if (::rmdir(dirname.c_str()) != 0) return PosixError(dirname, errno);
    return Status::OK();
  }

  Status GetFileSize(const std::string& fname, uint64_t* file_size) override {
    struct stat st;
    if (::stat(fname.c_str(), &st) != 0) {
      *file_size = 0;
      return PosixError(fname, errno);
    }
    *file_size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  Status RenameFile(const std::string& src, const std::string& target) override {
    if (::rename(src.c_str(), target.c_str()) != 0) return PosixError(src, errno);
    return Status::OK();
  }

  Status SyncDir(const std::string& dirname) override {
    int fd = ::open(dirname.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return PosixError(dirname, errno);
    Status s;
    if (::fsync(fd) != 0) s = PosixError(dirname, errno);
    ::close(fd);
    return s;
  }

  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override {
    lock->reset();
    int fd = ::open(fname.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(fname, errno);
    if (!locks_.Insert(fname)) {
      ::close(fd);
      return Status::Busy("lock " + fname, "already held by this process");
    }
    if (LockOrUnlock(fd, true) != 0) {
      int err = errno;
      ::close(fd);
      locks_.Remove(fname);
      if (err == EAGAIN || err == EACCES) {
        return Status::Busy("lock " + fname, "held by another process");
      }
      return PosixError("lock " + fname, err);
    }
    *lock = std::make_unique<PosixFileLock>(&locks_, fname, fd);
    return Status::OK();
  }

  Status UnlockFile(std::unique_ptr<FileLock> lock) override {
    if (lock == nullptr) return Status::InvalidArgument("UnlockFile: null lock");
    auto* posix_lock = dynamic_cast<PosixFileLock*>(lock.get());
    if (posix_lock == nullptr) return Status::InvalidArgument("UnlockFile: not a PosixEnv lock");
    return posix_lock->Release();
  }

  uint64_t NowMicros() override {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }

  void SleepForMicroseconds(int micros) override {
    std::this_thread::sleep_for(std::chrono::microseconds(micros));
  }

 private:
  Status OpenWritable(const std::string& fname, int mode_flag,
                      std::unique_ptr<WritableFile>* result) {
    result->reset();
    int fd = ::open(fname.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | mode_flag, 0644);
    if (fd < 0) return PosixError(fname, errno);
    *result = std::make_unique<PosixWritableFile>(fname, fd);
    return Status::OK();
  }

  LockTable locks_;
  MmapLimiter mmap_limiter_{DefaultMmapLimit()};
};

}  // namespace

Env* Env::Default() {
  static Env* const env = new PosixEnv();  // never deleted: outlives static destructors
  return env;
}

}  // namespace accelkv
