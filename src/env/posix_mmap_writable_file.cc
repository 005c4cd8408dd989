#include "env/posix_mmap_writable_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "env/posix_io.h"
#include "util/helper_threads.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older C libraries lack the name
#endif

namespace accelkv {
namespace {

constexpr size_t kFirstWindow = 64 << 10;
constexpr size_t kMaxWindow = 1 << 20;

// Copies n bytes so that a process killed during the copy leaves a prefix
// of the head, or the head and any part of the middle, but the last 8
// bytes only once all else is there: the first 8 bytes first (one 8-byte
// store: a log record's header), then the middle, then the last 8. A log
// record cut short so has its header (or a prefix of it) and a payload
// that ends in the window's zeros, which the WAL reader reads as a torn
// tail (docs/FORMAT.md). memcpy alone stores in no fixed order (glibc
// stores a large copy's first vector last), which could leave data behind
// a zero header: a corruption to the reader.
void CopyInOrder(char* dst, const char* src, size_t n) {
  if (n < 8) {
    for (size_t i = 0; i < n; ++i) {
      dst[i] = src[i];
      std::atomic_signal_fence(std::memory_order_seq_cst);
    }
    return;
  }
  std::memcpy(dst, src, 8);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // a kill falls between instructions
  if (n > 16) std::memcpy(dst + 8, src + 8, n - 16);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::memcpy(dst + n - 8, src + n - 8, 8);
}

// A window of the file: fallocate'd, mapped shared and writable, and with
// MADV_POPULATE_WRITE its pages faulted in writable (page cache pages found
// or allocated, and the file system's page_mkwrite done), so the stores
// that fill it take no page fault. Those faults were about 9% of a
// fillrandom writer's samples (perf, dev machine, 6M keys) before windows
// were mapped ahead by a helper thread (Ahead below).
struct Window {
  char* base = nullptr;  // nullptr: none
  size_t size = 0;
  uint64_t offset = 0;  // in the file
};

Status MapWindow(const std::string& fname, int fd, uint64_t offset, size_t size, Window* w) {
  const off_t end = static_cast<off_t>(offset + size);
  int r = ::fallocate(fd, 0, static_cast<off_t>(offset), static_cast<off_t>(size));
  if (r != 0 && (errno == EOPNOTSUPP || errno == ENOSYS)) {
    // No fallocate: grow the file (never shrink it: a window mapped ahead
    // may already reach further).
    struct stat st;
    r = ::fstat(fd, &st);
    if (r == 0 && st.st_size < end) r = ::ftruncate(fd, end);
  }
  if (r != 0) return PosixError(fname, errno);
  void* m =
      ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (m == MAP_FAILED) return PosixError(fname, errno);
  // Only an optimization: a kernel without it (before 5.14) faults on the
  // first store as before.
  (void)::madvise(m, size, MADV_POPULATE_WRITE);
  *w = Window{static_cast<char*>(m), size, offset};
  return Status::OK();
}

void Unmap(Window* w) {
  if (w->base != nullptr) ::munmap(w->base, w->size);  // fails only for bad arguments
  *w = Window{};
}

// The next window, mapped by a helper thread while the writer fills the
// current one; the helper also unmaps the window the writer left. Shared
// with the helper's task, which may outlive the file until Take returns.
class Ahead {
 public:
  // Starts mapping [offset, offset + size) and unmapping done (may be
  // empty). False if no helper could take it (nothing started; done is
  // still the caller's).
  static bool Start(const std::shared_ptr<Ahead>& ahead, const std::string& fname, int fd,
                    uint64_t offset, size_t size, Window done) {
    {
      std::lock_guard<std::mutex> l(ahead->mu_);
      ahead->busy_ = true;
    }
    const bool started =
        HelperThreads::Get()->Run([ahead, fname, fd, offset, size, done]() mutable {
          Unmap(&done);
          Window w;  // stays none if the mapping fails
          (void)MapWindow(fname, fd, offset, size, &w);
          std::lock_guard<std::mutex> l(ahead->mu_);
          ahead->window_ = w;
          ahead->busy_ = false;
          ahead->cv_.notify_all();
        });
    if (!started) {
      std::lock_guard<std::mutex> l(ahead->mu_);
      ahead->busy_ = false;
    }
    return started;
  }

  // Waits for the helper; returns its window (none if its mapping failed:
  // the caller maps the window itself, which reports the error).
  Window Take() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return !busy_; });
    Window w = window_;
    window_ = Window{};
    return w;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool busy_ = false;  // a helper's task is running or queued
  Window window_;      // mapped by the last task
};

class PosixMmapWritableFile final : public WritableFile {
 public:
  PosixMmapWritableFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {
    StartAhead(0, kFirstWindow, Window{});
  }
  ~PosixMmapWritableFile() override {
    if (fd_ >= 0) Close();  // errors are lost; callers that care call Close()
  }

  Status Append(const Slice& data) override {
    if (fd_ < 0) return Status::IOError(fname_, "append to closed file");
    const char* p = data.data();
    size_t n = data.size();
    while (n > 0) {
      if (dst_ == limit_) {
        Status s = MapNextWindow();
        if (!s.ok()) return s;
      }
      const size_t copy = std::min(n, static_cast<size_t>(limit_ - dst_));
      CopyInOrder(dst_, p, copy);
      dst_ += copy;
      p += copy;
      n -= copy;
    }
    return Status::OK();
  }

  Status Flush() override {
    if (fd_ < 0) return Status::IOError(fname_, "flush of closed file");
    return Status::OK();  // the bytes are in the page cache already
  }

  Status Sync() override {
    if (fd_ < 0) return Status::IOError(fname_, "sync of closed file");
    // On Linux a store into a shared mapping marks its page dirty in the
    // page cache (the write fault), as write(2) does, so fdatasync writes
    // the mapped pages too, those of unmapped windows included; an msync
    // first would only start the same writeback twice (measured: 6.1K
    // against 7.3K synced writes/s on the dev machine).
    if (::fdatasync(fd_) != 0) return PosixError(fname_, errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    const uint64_t size = FileSize();
    if (ahead_started_) {
      Window next = ahead_->Take();
      Unmap(&next);
      ahead_started_ = false;
    }
    Unmap(&window_);
    dst_ = limit_ = nullptr;
    // Also cuts off what was allocated ahead of the data.
    Status s;
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) s = PosixError(fname_, errno);
    if (::close(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  static size_t NextSize(size_t size) {
    return size == 0 ? kFirstWindow : std::min(size * 2, kMaxWindow);
  }

  uint64_t FileSize() const {
    return window_.offset + static_cast<uint64_t>(dst_ - window_.base);  // 0 before the first
  }

  // Has a helper map [offset, offset + size) and unmap done; without a
  // helper, done is unmapped here and the window is mapped when needed.
  void StartAhead(uint64_t offset, size_t size, Window done) {
    ahead_started_ = Ahead::Start(ahead_, fname_, fd_, offset, size, done);
    if (!ahead_started_) Unmap(&done);
  }

  // The current window is full: the next one (mapped ahead, or now) takes
  // its place, and the one after it is started ahead.
  Status MapNextWindow() {
    const uint64_t offset = window_.base == nullptr ? 0 : window_.offset + window_.size;
    const size_t size = NextSize(window_.size);
    Window next;
    if (ahead_started_) {
      next = ahead_->Take();
      ahead_started_ = false;
      if (next.base != nullptr && (next.offset != offset || next.size != size)) Unmap(&next);
    }
    if (next.base == nullptr) {
      Status s = MapWindow(fname_, fd_, offset, size, &next);
      if (!s.ok()) return s;  // the full window stays mapped; Append fails
    }
    const Window done = window_;
    window_ = next;
    dst_ = window_.base;
    limit_ = window_.base + window_.size;
    StartAhead(offset + size, NextSize(size), done);
    return Status::OK();
  }

  const std::string fname_;
  int fd_;                 // -1 once closed
  Window window_;          // the current window (none before the first Append)
  char* dst_ = nullptr;    // the next byte to write in it
  char* limit_ = nullptr;  // its end
  const std::shared_ptr<Ahead> ahead_ = std::make_shared<Ahead>();
  bool ahead_started_ = false;  // a window is being mapped ahead (Take it)
};

}  // namespace

Status NewPosixMmapWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result) {
  result->reset();
  const int fd = ::open(fname.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return PosixError(fname, errno);
  // A file system that cannot map the file shared and writable (some FUSE
  // and network ones: ENODEV, EINVAL, EACCES) gets NotSupported, so the
  // caller can write it buffered instead.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* probe = ::ftruncate(fd, static_cast<off_t>(page)) == 0
                    ? ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                    : MAP_FAILED;
  const int probe_errno = errno;
  if (probe != MAP_FAILED) ::munmap(probe, page);
  if (probe == MAP_FAILED || ::ftruncate(fd, 0) != 0) {
    ::close(fd);
    return Status::NotSupported(fname, std::strerror(probe_errno));
  }
  *result = std::make_unique<PosixMmapWritableFile>(fname, fd);
  return Status::OK();
}

}  // namespace accelkv
