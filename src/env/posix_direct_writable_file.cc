#include "env/posix_direct_writable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "env/posix_io.h"
#include "util/align.h"

namespace accelkv {

namespace {

constexpr size_t kStagingSize = 1 << 20;  // a multiple of kDirectIoAlignment

bool Aligned(uint64_t v) { return IsAligned(v, kDirectIoAlignment); }

class PosixDirectWritableFile final : public WritableFile {
 public:
  PosixDirectWritableFile(std::string fname, int fd, char* staging)
      : fname_(std::move(fname)), fd_(fd), staging_(staging) {}
  ~PosixDirectWritableFile() override {
    if (fd_ >= 0) (void)Close();  // errors are lost; callers that care call Close()
    std::free(staging_);
  }

  Status Append(const Slice& data) override {
    if (fd_ < 0) return Status::IOError(fname_, "append to closed file");
    const char* p = data.data();
    size_t n = data.size();
    // Zero-copy: nothing staged (so written_ == size_, aligned) and the
    // data at an aligned address: its whole blocks go straight out.
    if (staged_ == 0 && Aligned(reinterpret_cast<uintptr_t>(p))) {
      const size_t direct = AlignDown(n, kDirectIoAlignment);
      if (direct > 0) {
        Status s = WriteAt(p, direct, written_);
        if (!s.ok()) return s;
        written_ += direct;
        size_ += direct;
        p += direct;
        n -= direct;
      }
    }
    while (n > 0) {
      const size_t copy = std::min(n, kStagingSize - staged_);
      std::memcpy(staging_ + staged_, p, copy);
      staged_ += copy;
      size_ += copy;
      p += copy;
      n -= copy;
      if (staged_ == kStagingSize) {
        Status s = WriteStagedBlocks();
        if (!s.ok()) return s;
      }
    }
    return Status::OK();
  }

  // Writes the staged whole blocks; a partial last block stays staged (it
  // can go out only padded: Sync and Close).
  Status Flush() override {
    if (fd_ < 0) return Status::IOError(fname_, "flush of closed file");
    return WriteStagedBlocks();
  }

  Status Sync() override {
    if (fd_ < 0) return Status::IOError(fname_, "sync of closed file");
    Status s = WriteAll();
    if (s.ok() && ::fdatasync(fd_) != 0) s = PosixError(fname_, errno);
    return s;
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    Status s = WriteAll();
    if (::close(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  // Everything appended reaches the file: the staged blocks, the partial
  // last block padded with zeros, then the size cut back to size_.
  Status WriteAll() {
    Status s = WriteStagedBlocks();
    if (!s.ok()) return s;
    if (staged_ > 0) {
      const size_t padded = kDirectIoAlignment;  // staged_ < one block here
      std::memset(staging_ + staged_, 0, padded - staged_);
      s = WriteAt(staging_, padded, written_);
      if (!s.ok()) return s;
    }
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) return PosixError(fname_, errno);
    return Status::OK();
  }

  // Writes the staged whole blocks and moves the partial rest to the front.
  Status WriteStagedBlocks() {
    const size_t whole = AlignDown(staged_, kDirectIoAlignment);
    if (whole == 0) return Status::OK();
    Status s = WriteAt(staging_, whole, written_);
    if (!s.ok()) return s;
    written_ += whole;
    staged_ -= whole;
    std::memmove(staging_, staging_ + whole, staged_);
    return Status::OK();
  }

  Status WriteAt(const char* p, size_t n, uint64_t offset) {
    while (n > 0) {
      const ssize_t r = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError(fname_, errno);
      }
      if (r == 0 || !Aligned(static_cast<uint64_t>(r))) {
        // A short direct write that is not a whole number of blocks cannot
        // be continued from an aligned address.
        return Status::IOError(fname_, "short direct write");
      }
      p += r;
      n -= static_cast<size_t>(r);
      offset += static_cast<uint64_t>(r);
    }
    return Status::OK();
  }

  const std::string fname_;
  int fd_;                // -1 once closed
  char* const staging_;   // kStagingSize bytes, aligned
  size_t staged_ = 0;     // bytes [written_, size_) in staging_
  uint64_t written_ = 0;  // bytes written as whole blocks (aligned)
  uint64_t size_ = 0;     // bytes appended
};

}  // namespace

Status NewPosixDirectWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result) {
  result->reset();
  const int fd = ::open(fname.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == EINVAL) return Status::InvalidArgument(fname, "the file system refuses O_DIRECT");
    return PosixError(fname, err);
  }
  void* staging = nullptr;
  if (::posix_memalign(&staging, kDirectIoAlignment, kStagingSize) != 0) {
    ::close(fd);
    return Status::IOError(fname, "no memory for the direct-write staging buffer");
  }
  *result = std::make_unique<PosixDirectWritableFile>(fname, fd, static_cast<char*>(staging));
  return Status::OK();
}

}  // namespace accelkv
