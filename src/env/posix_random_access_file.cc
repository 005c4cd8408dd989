#include "env/posix_random_access_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>
#include <utility>

#include "env/mapped_page_guard.h"
#include "env/posix_io.h"

namespace accelkv {
namespace {

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  // Starts the kernel's readahead of the range into the page cache.
  Status Prefetch(uint64_t offset, size_t n) const override {
    const int e = ::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(n),
                                  POSIX_FADV_WILLNEED);
    return e == 0 ? Status::OK() : PosixError(fname_, e);
  }

  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    return ReadFully(fname_, n, scratch, result, [&](char* dst, size_t len, size_t done) {
      return ::pread(fd_, dst, len, static_cast<off_t>(offset + done));
    });
  }

 private:
  const std::string fname_;
  const int fd_;
};

// The whole file mapped read-only; Read returns pointers into the mapping.
class PosixMmapReadableFile final : public RandomAccessFile {
 public:
  PosixMmapReadableFile(std::string fname, char* base, size_t length, MmapLimiter* limiter)
      : fname_(std::move(fname)), base_(base), length_(length), limiter_(limiter) {}
  ~PosixMmapReadableFile() override {
    ::munmap(base_, length_);
    limiter_->Release();
  }

  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    if (offset >= length_) {
      *result = Slice(scratch, 0);  // past the end: nothing, as pread
      return Status::OK();
    }
    const size_t len = static_cast<size_t>(std::min<uint64_t>(n, length_ - offset));
    if (!TouchMappedPages(base_ + offset, len)) {
      *result = Slice(scratch, 0);
      return Status::IOError(fname_, "I/O error reading the mapped file (SIGBUS)");
    }
    *result = Slice(base_ + offset, len);
    return Status::OK();
  }

  // Starts the kernel's readahead of the mapped range (from its page start).
  Status Prefetch(uint64_t offset, size_t n) const override {
    if (offset >= length_) return Status::OK();
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t start = offset / page * page;
    const size_t len =
        static_cast<size_t>(std::min<uint64_t>(n, length_ - offset) + offset - start);
    if (::madvise(base_ + start, len, MADV_WILLNEED) != 0) return PosixError(fname_, errno);
    return Status::OK();
  }

 private:
  const std::string fname_;
  char* const base_;
  const size_t length_;
  MmapLimiter* const limiter_;
};

// Maps fd's whole file; nullptr (with the slot returned) if it cannot.
std::unique_ptr<RandomAccessFile> TryMap(const std::string& fname, int fd, MmapLimiter* limiter) {
  if (!limiter->Acquire()) return nullptr;
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0 && static_cast<uint64_t>(st.st_size) <= SIZE_MAX) {
    const auto length = static_cast<size_t>(st.st_size);
    void* base = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
    if (base != MAP_FAILED) {
      return std::make_unique<PosixMmapReadableFile>(fname, static_cast<char*>(base), length,
                                                     limiter);
    }
  }
  limiter->Release();
  return nullptr;
}

}  // namespace

bool MmapLimiter::Acquire() {
  int old = available_.load(std::memory_order_relaxed);
  while (old > 0) {
    if (available_.compare_exchange_weak(old, old - 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

int DefaultMmapLimit() { return sizeof(void*) >= 8 ? 1000 : 0; }

Status NewPosixRandomAccessFile(const std::string& fname, bool use_mmap, MmapLimiter* limiter,
                                std::unique_ptr<RandomAccessFile>* result) {
  result->reset();
  const int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PosixError(fname, errno);
  if (use_mmap) {
    *result = TryMap(fname, fd, limiter);
    if (*result != nullptr) {
      ::close(fd);  // the mapping keeps the file's pages
      return Status::OK();
    }
  }
  *result = std::make_unique<PosixRandomAccessFile>(fname, fd);
  return Status::OK();
}

}  // namespace accelkv
