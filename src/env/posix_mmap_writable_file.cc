#include "env/posix_mmap_writable_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "env/posix_io.h"

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

class PosixMmapWritableFile final : public WritableFile {
 public:
  PosixMmapWritableFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
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
    Status s = Unmap();
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0 && s.ok()) s = PosixError(fname_, errno);
    if (::close(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  uint64_t FileSize() const {
    return window_offset_ + static_cast<uint64_t>(dst_ - base_);  // 0 before the first window
  }

  Status Unmap() {
    if (base_ == nullptr) return Status::OK();
    const int r = ::munmap(base_, window_);
    base_ = dst_ = limit_ = nullptr;
    if (r != 0) return PosixError(fname_, errno);
    return Status::OK();
  }

  // Unmaps the full window and maps the next one, allocated first.
  Status MapNextWindow() {
    const uint64_t offset = FileSize();
    Status s = Unmap();
    if (!s.ok()) return s;
    window_ = window_ == 0 ? kFirstWindow : std::min(window_ * 2, kMaxWindow);
    window_offset_ = offset;
    const off_t end = static_cast<off_t>(offset + window_);
    int r = ::fallocate(fd_, 0, static_cast<off_t>(offset), static_cast<off_t>(window_));
    if (r != 0 && (errno == EOPNOTSUPP || errno == ENOSYS)) r = ::ftruncate(fd_, end);
    if (r != 0) return PosixError(fname_, errno);
    void* m = ::mmap(nullptr, window_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                     static_cast<off_t>(offset));
    if (m == MAP_FAILED) return PosixError(fname_, errno);
    base_ = dst_ = static_cast<char*>(m);
    limit_ = base_ + window_;
    return Status::OK();
  }

  const std::string fname_;
  int fd_;                      // -1 once closed
  size_t window_ = 0;           // bytes of the current window (0: none mapped yet)
  uint64_t window_offset_ = 0;  // file offset of base_
  char* base_ = nullptr;        // the mapping
  char* dst_ = nullptr;         // the next byte to write
  char* limit_ = nullptr;       // the window's end
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
