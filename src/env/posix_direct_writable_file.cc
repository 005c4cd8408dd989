#include "env/posix_direct_writable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "env/direct_io_priority.h"
#include "env/posix_io.h"
#include "util/align.h"
#include "util/helper_threads.h"

namespace accelkv {

namespace {

constexpr size_t kStagingSize = 1 << 20;  // a multiple of kDirectIoAlignment
// Staging buffers per file: one being filled, the others being written.
constexpr int kStagingBuffers = 4;

bool Aligned(uint64_t v) { return IsAligned(v, kDirectIoAlignment); }

std::atomic<uint64_t> g_direct_writes{0};
std::atomic<uint64_t> g_largest_direct_write{0};

void CountDirectWrite(size_t n) {
  g_direct_writes.fetch_add(1, std::memory_order_relaxed);
  uint64_t largest = g_largest_direct_write.load(std::memory_order_relaxed);
  while (n > largest &&
         !g_largest_direct_write.compare_exchange_weak(largest, n, std::memory_order_relaxed)) {
  }
}

// pwrite of n bytes at offset, all of it, at most kDirectWriteMaxBytes per
// call (see the header); aligned p, n and offset. A low-priority file's
// (low: the gate; null for a high-priority one) pwrites are each admitted
// by the gate.
Status PwriteAll(const std::string& fname, int fd, const char* p, size_t n, uint64_t offset,
                 DirectIoPriorityGate* low) {
  while (n > 0) {
    const size_t step = std::min(n, kDirectWriteMaxBytes);
    CountDirectWrite(step);
    ssize_t r;
    {
      LowPriorityRequest admitted(low);
      r = ::pwrite(fd, p, step, static_cast<off_t>(offset));
    }
    if (r < 0) {
      if (errno == EINTR) continue;
      return PosixError(fname, errno);
    }
    if (r == 0 || !Aligned(static_cast<uint64_t>(r))) {
      // A short direct write that is not a whole number of blocks cannot
      // be continued from an aligned address.
      return Status::IOError(fname, "short direct write");
    }
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return Status::OK();
}

// Full staging buffers are written behind the appender by helper threads
// (util/helper_threads.h), up to kStagingBuffers - 1 at once, so building
// the next megabyte overlaps writing the last ones, and a file written
// beside other direct I/O keeps several requests in the device's queue. A
// flush builds its L0 table this way: with one synchronous write per MiB,
// the flushes of a GPU-compacted database under load waited on the disk
// for about a third of their time and fell behind the memtable (writes
// stopped for up to 17% of a 120M-key load,
// bench/results/2026-11-26-h100-large-load.md). The first failed write is
// kept and returned by the next call; Flush, Sync and Close wait for every
// write in flight.
class WriteBehind {
 public:
  // first: the first staging buffer (kStagingSize bytes, aligned), owned
  // from now on; the others are allocated when first needed.
  WriteBehind(std::string fname, int fd, char* first, DirectIoPriorityGate* low)
      : fname_(std::move(fname)), fd_(fd), low_(low) {
    buffers_.push_back(first);
  }
  ~WriteBehind() {
    (void)Drain();
    for (char* b : buffers_) std::free(b);
  }
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;

  // Takes full buffer (kStagingSize bytes at offset) and returns an empty
  // one, waiting while every other buffer is being written. The write runs
  // on a helper thread, or here when none can be started.
  char* Submit(char* full, uint64_t offset) {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++in_flight_;
    }
    if (!HelperThreads::Get()->Run([this, full, offset] { Write(full, offset); })) {
      Write(full, offset);
    }
    std::unique_lock<std::mutex> l(mu_);
    if (free_.empty() && buffers_.size() < kStagingBuffers) {
      void* b = nullptr;
      if (::posix_memalign(&b, kDirectIoAlignment, kStagingSize) == 0) {
        buffers_.push_back(static_cast<char*>(b));
        return static_cast<char*>(b);
      }
    }
    cv_.wait(l, [this] { return !free_.empty(); });  // no memory: wait for one
    char* next = free_.back();
    free_.pop_back();
    return next;
  }

  // Waits for every write in flight; the first error of any write so far.
  Status Drain() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return in_flight_ == 0; });
    return error_;
  }

  // The first error of a finished write, without waiting.
  Status error() {
    std::lock_guard<std::mutex> l(mu_);
    return error_;
  }

 private:
  void Write(char* buffer, uint64_t offset) {
    Status s = PwriteAll(fname_, fd_, buffer, kStagingSize, offset, low_);
    std::lock_guard<std::mutex> l(mu_);
    if (!s.ok() && error_.ok()) error_ = s;
    free_.push_back(buffer);
    --in_flight_;
    cv_.notify_all();  // under mu_: the file may be destroyed once Drain sees 0
  }

  const std::string fname_;
  const int fd_;
  DirectIoPriorityGate* const low_;  // the gate for a low-priority file, else null
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<char*> buffers_;  // every staging buffer, at most kStagingBuffers (under mu_)
  std::vector<char*> free_;     // buffers not being filled or written (under mu_)
  int in_flight_ = 0;           // writes submitted and not finished (under mu_)
  Status error_;                // the first failed write's (under mu_)
};

class PosixDirectWritableFile final : public WritableFile {
 public:
  // A high-priority file counts as open at the gate until closed; a
  // low-priority one's pwrites are admitted by it.
  PosixDirectWritableFile(std::string fname, int fd, char* staging, IOPriority priority)
      : fname_(std::move(fname)),
        fd_(fd),
        gate_(DirectIoPriorityGate::Get()),
        high_(priority == IOPriority::kHigh),
        behind_(fname_, fd, staging, high_ ? nullptr : gate_),
        staging_(staging) {
    if (high_) gate_->HighFileOpened();
  }
  ~PosixDirectWritableFile() override {
    if (fd_ >= 0) (void)Close();  // errors are lost; callers that care call Close()
  }

  Status Append(const Slice& data) override {
    if (fd_ < 0) return Status::IOError(fname_, "append to closed file");
    Status s = behind_.error();
    if (!s.ok()) return s;
    const char* p = data.data();
    size_t n = data.size();
    // Zero-copy: nothing staged (so written_ == size_, aligned) and the
    // data at an aligned address: its whole blocks go straight out (the
    // caller's memory may be reused once Append returns, so not behind).
    if (staged_ == 0 && Aligned(reinterpret_cast<uintptr_t>(p))) {
      const size_t direct = AlignDown(n, kDirectIoAlignment);
      if (direct > 0) {
        s = PwriteAll(fname_, fd_, p, direct, written_, low());
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
        staging_ = behind_.Submit(staging_, written_);
        written_ += kStagingSize;
        staged_ = 0;
      }
    }
    return Status::OK();
  }

  // Writes the staged whole blocks; a partial last block stays staged (it
  // can go out only padded: Sync and Close).
  Status Flush() override {
    if (fd_ < 0) return Status::IOError(fname_, "flush of closed file");
    Status s = behind_.Drain();
    if (!s.ok()) return s;
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
    if (high_) gate_->HighFileClosed();
    return s;
  }

 private:
  DirectIoPriorityGate* low() const { return high_ ? nullptr : gate_; }

  // Everything appended reaches the file: the writes in flight, the staged
  // blocks, the partial last block padded with zeros, then the size cut
  // back to size_.
  Status WriteAll() {
    Status s = behind_.Drain();
    if (s.ok()) s = WriteStagedBlocks();
    if (!s.ok()) return s;
    if (staged_ > 0) {
      const size_t padded = kDirectIoAlignment;  // staged_ < one block here
      std::memset(staging_ + staged_, 0, padded - staged_);
      s = PwriteAll(fname_, fd_, staging_, padded, written_, low());
      if (!s.ok()) return s;
    }
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) return PosixError(fname_, errno);
    return Status::OK();
  }

  // Writes the staged whole blocks and moves the partial rest to the front.
  Status WriteStagedBlocks() {
    const size_t whole = AlignDown(staged_, kDirectIoAlignment);
    if (whole == 0) return Status::OK();
    Status s = PwriteAll(fname_, fd_, staging_, whole, written_, low());
    if (!s.ok()) return s;
    written_ += whole;
    staged_ -= whole;
    std::memmove(staging_, staging_ + whole, staged_);
    return Status::OK();
  }

  const std::string fname_;
  int fd_;  // -1 once closed
  DirectIoPriorityGate* const gate_;
  const bool high_;  // IOPriority::kHigh
  WriteBehind behind_;
  char* staging_;         // the staging buffer being filled (kStagingSize, aligned)
  size_t staged_ = 0;     // bytes [written_, size_) in staging_
  uint64_t written_ = 0;  // bytes written or being written as whole blocks
  uint64_t size_ = 0;     // bytes appended
};

}  // namespace

DirectWriteCounts GetDirectWriteCounts() {
  DirectWriteCounts c;
  c.writes = g_direct_writes.load(std::memory_order_relaxed);
  c.largest = g_largest_direct_write.load(std::memory_order_relaxed);
  return c;
}

Status NewPosixDirectWritableFile(const std::string& fname, IOPriority priority,
                                  std::unique_ptr<WritableFile>* result) {
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
  *result =
      std::make_unique<PosixDirectWritableFile>(fname, fd, static_cast<char*>(staging), priority);
  return Status::OK();
}

}  // namespace accelkv
