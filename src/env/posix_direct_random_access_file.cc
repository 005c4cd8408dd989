#include "env/posix_direct_random_access_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "env/direct_io_priority.h"
#include "env/posix_io.h"
#include "util/align.h"

namespace accelkv {

namespace {

static_assert(kDirectReadBounceSize % kDirectIoAlignment == 0);

std::atomic<uint64_t> g_aligned_reads{0};
std::atomic<uint64_t> g_bounced_reads{0};

bool Aligned(uint64_t v) { return IsAligned(v, kDirectIoAlignment); }

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

class PosixDirectRandomAccessFile final : public RandomAccessFile {
 public:
  // low: the gate admitting each pread of a low-priority file, else null.
  PosixDirectRandomAccessFile(std::string fname, int fd, DirectIoPriorityGate* low)
      : fname_(std::move(fname)), fd_(fd), low_(low) {}
  ~PosixDirectRandomAccessFile() override { ::close(fd_); }

  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    *result = Slice(scratch, 0);
    if (n == 0) return Status::OK();
    if (Aligned(offset) && Aligned(n) && Aligned(reinterpret_cast<uintptr_t>(scratch))) {
      g_aligned_reads.fetch_add(1, std::memory_order_relaxed);
      size_t got = 0;
      Status s = ReadAligned(scratch, n, offset, &got);
      *result = Slice(scratch, s.ok() ? got : 0);
      return s;
    }
    g_bounced_reads.fetch_add(1, std::memory_order_relaxed);
    return ReadBounced(offset, n, result, scratch);
  }

  // The page cache is bypassed: nothing to start.
  Status Prefetch(uint64_t /*offset*/, size_t /*n*/) const override { return Status::OK(); }

 private:
  // Reads [offset, offset + n) (all three aligned) into dst, as far as the
  // file goes: *got < n only at the end of the file. O_DIRECT returns a
  // short count there (the bytes up to the end, not a multiple of the
  // alignment), and a pread from the unaligned offset after it would fail:
  // an unaligned count ends the read.
  Status ReadAligned(char* dst, size_t n, uint64_t offset, size_t* got) const {
    size_t done = 0;
    while (done < n) {
      ssize_t r;
      {
        LowPriorityRequest admitted(low_);
        r = ::pread(fd_, dst + done, n - done, static_cast<off_t>(offset + done));
      }
      if (r < 0) {
        if (errno == EINTR) continue;
        *got = 0;
        return PosixError(fname_, errno);
      }
      if (r == 0) break;  // end of file
      done += static_cast<size_t>(r);
      if (!Aligned(static_cast<uint64_t>(r))) break;  // a short count: end of file
    }
    *got = done;
    return Status::OK();
  }

  // Reads [offset, offset + n) through an aligned bounce buffer: the aligned
  // cover of each piece (at most kDirectReadBounceSize bytes), then its
  // requested bytes copied into scratch.
  Status ReadBounced(uint64_t offset, size_t n, Slice* result, char* scratch) const {
    const uint64_t skip0 = offset - AlignDown(offset, kDirectIoAlignment);
    const size_t capacity = static_cast<size_t>(std::min<uint64_t>(
        kDirectReadBounceSize, AlignUp(skip0 + static_cast<uint64_t>(n), kDirectIoAlignment)));
    void* raw = nullptr;
    if (::posix_memalign(&raw, kDirectIoAlignment, capacity) != 0) {
      return Status::IOError(fname_, "no memory for the direct-read bounce buffer");
    }
    const std::unique_ptr<char, FreeDeleter> bounce(static_cast<char*>(raw));
    size_t done = 0;
    while (done < n) {
      const uint64_t pos = offset + done;
      const uint64_t start = AlignDown(pos, kDirectIoAlignment);
      const size_t skip = static_cast<size_t>(pos - start);
      const size_t want = std::min(n - done, capacity - skip);
      const size_t len =
          static_cast<size_t>(AlignUp(skip + want, kDirectIoAlignment));  // <= capacity
      size_t got = 0;
      Status s = ReadAligned(bounce.get(), len, start, &got);
      if (!s.ok()) return s;   // *result stays empty
      if (got <= skip) break;  // the piece starts at or past the end of the file
      const size_t copy = std::min(want, got - skip);
      std::memcpy(scratch + done, bounce.get() + skip, copy);
      done += copy;
      if (copy < want) break;  // end of file
    }
    *result = Slice(scratch, done);
    return Status::OK();
  }

  const std::string fname_;
  const int fd_;
  DirectIoPriorityGate* const low_;
};

}  // namespace

DirectReadCounts GetDirectReadCounts() {
  DirectReadCounts c;
  c.aligned = g_aligned_reads.load(std::memory_order_relaxed);
  c.bounced = g_bounced_reads.load(std::memory_order_relaxed);
  return c;
}

Status NewPosixDirectRandomAccessFile(const std::string& fname, IOPriority priority,
                                      std::unique_ptr<RandomAccessFile>* result) {
  result->reset();
  const int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (fd < 0) {
    const int err = errno;
    if (err == EINVAL) return Status::InvalidArgument(fname, "the file system refuses O_DIRECT");
    return PosixError(fname, err);
  }
  *result = std::make_unique<PosixDirectRandomAccessFile>(
      fname, fd, priority == IOPriority::kLow ? DirectIoPriorityGate::Get() : nullptr);
  return Status::OK();
}

}  // namespace accelkv
