// PosixEnv behaviour that MemEnv does not model: locks against other
// processes, OS error reporting, files written by other means.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>

#include <memory>

#include <cstdlib>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <thread>
#include <vector>

#include "accelkv/env.h"
#include "env/direct_io_priority.h"
#include "env/posix_direct_random_access_file.h"
#include "env/posix_direct_writable_file.h"
#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

// 0 if another process holds a write lock on fname, 1 if it could lock it.
int ChildTryLock(const std::string& fname) {
  int fd = ::open(fname.c_str(), O_RDWR);
  if (fd < 0) return 2;
  struct flock f;
  std::memset(&f, 0, sizeof(f));
  f.l_type = F_WRLCK;
  f.l_whence = SEEK_SET;
  int r = ::fcntl(fd, F_SETLK, &f);
  int err = errno;
  ::close(fd);
  if (r == 0) return 1;
  return (err == EAGAIN || err == EACCES) ? 0 : 3;
}

int RunInChild(const std::string& fname) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(ChildTryLock(fname));
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(PosixEnv, LockExcludesOtherProcesses) {
  test::TempDir dir;
  Env* env = Env::Default();
  const std::string lockname = dir.File("LOCK");
  std::unique_ptr<FileLock> lock;
  ASSERT_TRUE(env->LockFile(lockname, &lock).ok());
  EXPECT_EQ(0, RunInChild(lockname));  // held: the other process is refused
  ASSERT_TRUE(env->UnlockFile(std::move(lock)).ok());
  EXPECT_EQ(1, RunInChild(lockname));  // released
}

TEST(PosixEnv, DefaultIsASingleton) { EXPECT_EQ(Env::Default(), Env::Default()); }

TEST(PosixEnv, ErrorsNameThePathAndReason) {
  test::TempDir dir;
  Env* env = Env::Default();
  // Creating a file inside a missing directory: ENOENT -> NotFound.
  std::unique_ptr<WritableFile> w;
  Status s = env->NewWritableFile(dir.File("nodir/file"), &w);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(dir.File("nodir/file")));
  EXPECT_NE(std::string::npos, s.ToString().find(std::strerror(ENOENT)));
  // A directory cannot be opened for writing: EISDIR -> IOError.
  s = env->NewWritableFile(dir.path(), &w);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  // CreateDir over an existing regular file fails.
  ASSERT_TRUE(WriteStringToFile(env, "x", dir.File("plain"), false).ok());
  s = env->CreateDir(dir.File("plain"));
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  // WriteStringToFile reports the open error.
  s = WriteStringToFile(env, "data", dir.File("nodir/f"), true);
  EXPECT_FALSE(s.ok());
}

TEST(PosixEnv, ReadsFilesWrittenOutsideTheEnv) {
  test::TempDir dir;
  {
    std::ofstream out(dir.File("ext"), std::ios::binary);
    out << "written by ofstream";
  }
  std::string data;
  ASSERT_TRUE(ReadFileToString(Env::Default(), dir.File("ext"), &data).ok());
  EXPECT_EQ("written by ofstream", data);
}

TEST(PosixEnv, WritesAreVisibleOnlyAfterFlushWhenBuffered) {
  test::TempDir dir;
  Env* env = Env::Default();
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env->NewWritableFile(dir.File("buf"), &w).ok());
  ASSERT_TRUE(w->Append("small").ok());
  uint64_t size = 99;
  ASSERT_TRUE(env->GetFileSize(dir.File("buf"), &size).ok());
  EXPECT_EQ(0u, size);  // still in the 64 KiB user-space buffer
  ASSERT_TRUE(w->Append(std::string(70 * 1024, 'b')).ok());  // overflows: written through
  ASSERT_TRUE(env->GetFileSize(dir.File("buf"), &size).ok());
  EXPECT_GE(size, 64u * 1024);
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(env->GetFileSize(dir.File("buf"), &size).ok());
  EXPECT_EQ(5u + 70 * 1024, size);
  ASSERT_TRUE(w->Close().ok());
}

// WritableFileOptions::use_direct_writes: whatever the pattern of appends
// (aligned and not, large and small, from aligned and unaligned memory),
// flushes and syncs, the file holds exactly the bytes appended, at each
// Sync and after Close; a later append after a Sync rewrites the padded
// last block.
TEST(PosixEnv, DirectWritesHoldExactlyTheBytesAppended) {
  Env* env = Env::Default();
  test::TempDir dir;
  Random rnd(test::TestSeed());
  WritableFileOptions direct;
  direct.use_direct_writes = true;
  // A page-aligned source, so that the zero-copy path runs too.
  std::unique_ptr<char, decltype(&std::free)> src(
      static_cast<char*>(std::aligned_alloc(4096, 3 << 20)), &std::free);
  for (size_t i = 0; i < (3u << 20); ++i) src.get()[i] = static_cast<char>(rnd.Uniform(256));
  for (int iter = 0; iter < 40; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    const std::string fname = dir.File("direct-" + std::to_string(iter));
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(env->NewWritableFile(fname, direct, &file).ok());
    std::string expected;
    const int appends = 1 + static_cast<int>(rnd.Uniform(8));
    for (int a = 0; a < appends; ++a) {
      // Sizes from 0 to 2.5 MiB, multiples of 4 KiB half the time; sources
      // aligned half the time.
      size_t n = rnd.OneIn(2) ? 4096 * rnd.Uniform(640) : rnd.Uniform(2600000);
      const size_t at = rnd.OneIn(2) ? 0 : rnd.Uniform(4096);
      n = std::min(n, (3u << 20) - at);
      ASSERT_TRUE(file->Append(Slice(src.get() + at, n)).ok());
      expected.append(src.get() + at, n);
      if (rnd.OneIn(3)) {
        ASSERT_TRUE(file->Flush().ok());
      }
      if (rnd.OneIn(3)) {
        ASSERT_TRUE(file->Sync().ok());
        std::string got;
        ASSERT_TRUE(ReadFileToString(env, fname, &got).ok());
        ASSERT_TRUE(got == expected) << "after sync: " << got.size() << " vs " << expected.size();
      }
    }
    ASSERT_TRUE(file->Close().ok());
    std::string got;
    ASSERT_TRUE(ReadFileToString(env, fname, &got).ok());
    ASSERT_EQ(expected.size(), got.size());
    ASSERT_TRUE(got == expected);
  }
}

// The direct-I/O writable file itself (posix_direct_writable_file.h), opened
// on a fresh file; the tests skip on a file system that refuses O_DIRECT.
class DirectWriteTest : public testing::Test {
 protected:
  void SetUp() override {
    const Status open = NewPosixDirectWritableFile(fname_, IOPriority::kHigh, &file_);
    if (open.IsInvalidArgument()) GTEST_SKIP() << "the file system refuses O_DIRECT";
    ASSERT_TRUE(open.ok()) << open.ToString();
  }

  test::TempDir dir_;
  const std::string fname_ = dir_.File("direct");
  std::unique_ptr<WritableFile> file_;
};

// A table's pattern: many block-sized appends from unaligned memory, so
// that full staging buffers are written behind the appender, several at
// once (posix_direct_writable_file.cc), with a Flush in the middle; the file
// holds exactly the bytes appended.
TEST_F(DirectWriteTest, WritesBehindTheAppenderKeepEveryByteInPlace) {
  Random rnd(test::TestSeed());
  std::string expected;
  std::string block;
  while (expected.size() < (13u << 20)) {
    block.resize(1 + rnd.Uniform(8192));
    for (char& c : block) c = static_cast<char>(rnd.Uniform(256));
    ASSERT_TRUE(file_->Append(block).ok());
    expected += block;
    if (expected.size() > (6u << 20) && expected.size() - block.size() <= (6u << 20)) {
      ASSERT_TRUE(file_->Flush().ok());
    }
  }
  ASSERT_TRUE(file_->Close().ok());
  std::string got;
  ASSERT_TRUE(ReadFileToString(Env::Default(), fname_, &got).ok());
  ASSERT_EQ(expected.size(), got.size());
  EXPECT_TRUE(got == expected);
}

// A zero-copy Append (aligned memory, nothing staged) longer than
// kDirectWriteMaxBytes goes out in pieces of at most that size, and the
// file holds exactly its bytes.
TEST_F(DirectWriteTest, LongZeroCopyAppendIsWrittenInPieces) {
  const size_t n = 2 * kDirectWriteMaxBytes + kDirectWriteMaxBytes / 2 + 1000;
  // aligned_alloc takes a multiple of the alignment (ASan enforces it).
  std::unique_ptr<char, decltype(&std::free)> src(
      static_cast<char*>(std::aligned_alloc(4096, (n + 4095) / 4096 * 4096)), &std::free);
  Random rnd(test::TestSeed());
  for (size_t i = 0; i < n; ++i) src.get()[i] = static_cast<char>(rnd.Uniform(256));
  const DirectWriteCounts before = GetDirectWriteCounts();
  ASSERT_TRUE(file_->Append(Slice(src.get(), n)).ok());
  const DirectWriteCounts after = GetDirectWriteCounts();
  EXPECT_GE(after.writes - before.writes, 3u);
  EXPECT_LE(after.largest, kDirectWriteMaxBytes);
  ASSERT_TRUE(file_->Close().ok());
  std::string got;
  ASSERT_TRUE(ReadFileToString(Env::Default(), fname_, &got).ok());
  ASSERT_EQ(n, got.size());
  EXPECT_TRUE(got == std::string(src.get(), n));
}

// IOPriority through Env::Default(): a kLow direct file's pwrites and
// preads are each admitted by the process's DirectIoPriorityGate, a kHigh
// file's are not (it counts as open instead), and a kLow file written while
// a kHigh one is open still holds exactly its bytes.
TEST_F(DirectWriteTest, LowPriorityRequestsGoThroughTheGate) {
  DirectIoPriorityGate* gate = DirectIoPriorityGate::Get();
  const std::string data(3u << 20, 'p');  // one pwrite (zero-copy) or three (staged) at least
  WritableFileOptions options;
  options.use_direct_writes = true;
  options.io_priority = IOPriority::kLow;
  const uint64_t before = gate->counts().low_admitted;
  ASSERT_TRUE(file_->Append(data).ok());  // file_ is kHigh: open at the gate until closed
  ASSERT_TRUE(file_->Close().ok());
  EXPECT_EQ(before, gate->counts().low_admitted);

  WritableFileOptions high_options;
  high_options.use_direct_writes = true;  // io_priority kHigh by default
  std::unique_ptr<WritableFile> high;
  ASSERT_TRUE(Env::Default()->NewWritableFile(dir_.File("high"), high_options, &high).ok());
  std::unique_ptr<WritableFile> low;
  ASSERT_TRUE(Env::Default()->NewWritableFile(dir_.File("low"), options, &low).ok());
  ASSERT_TRUE(low->Append(data).ok());
  ASSERT_TRUE(low->Close().ok());
  ASSERT_TRUE(high->Close().ok());
  const uint64_t written = gate->counts().low_admitted;
  EXPECT_GE(written - before, 1u);
  EXPECT_LE(gate->counts().max_low_in_flight_while_high, kDefaultLowInFlightWhileHigh);
  std::string got;
  ASSERT_TRUE(ReadFileToString(Env::Default(), dir_.File("low"), &got).ok());
  EXPECT_TRUE(got == data);

  RandomAccessFileOptions read_options;
  read_options.use_direct_reads = true;
  read_options.io_priority = IOPriority::kLow;
  std::unique_ptr<RandomAccessFile> reader;
  ASSERT_TRUE(Env::Default()->NewRandomAccessFile(dir_.File("low"), read_options, &reader).ok());
  std::string scratch(8192, '\0');
  Slice r;
  ASSERT_TRUE(reader->Read(4096, 100, &r, scratch.data()).ok());
  EXPECT_EQ(std::string(data, 4096, 100), r.ToString());
  EXPECT_GE(gate->counts().low_admitted, written + 1);
}

// A write behind the appender that fails (here: past the process's file
// size limit, EFBIG with SIGXFSZ ignored) is reported by a later Append of
// the file, which only stages bytes in memory, and again by Close: never
// lost.
TEST_F(DirectWriteTest, WriteBehindFailureReachesTheCaller) {
  struct rlimit old_limit;
  ASSERT_EQ(0, getrlimit(RLIMIT_FSIZE, &old_limit));
  struct sigaction ignore = {}, old_action;
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(0, sigaction(SIGXFSZ, &ignore, &old_action));
  struct rlimit limit = old_limit;
  limit.rlim_cur = 2u << 20;
  ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &limit));
  const std::string block(4000, 'x');
  Status appended;
  int appends = 0;
  for (; appends < 3000 && appended.ok(); appends++) appended = file_->Append(block);  // 12 MB
  const Status closed = file_->Close();
  ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &old_limit));
  ASSERT_EQ(0, sigaction(SIGXFSZ, &old_action, nullptr));
  EXPECT_TRUE(appended.IsIOError()) << appended.ToString() << " after " << appends << " appends";
  EXPECT_TRUE(closed.IsIOError()) << closed.ToString();
}

// RandomAccessFileOptions::use_direct_reads (posix_direct_random_access_file.h).
class DirectReadTest : public testing::Test {
 protected:
  static constexpr size_t kAlign = 4096;

  // Writes data to a fresh file and opens it with use_direct_reads through
  // Env::Default(); *direct says whether the file system took O_DIRECT (on
  // one that refuses it the Env falls back to the pread file, which must
  // read the same bytes).
  std::unique_ptr<RandomAccessFile> Open(const std::string& name, const std::string& data,
                                         bool* direct) {
    const std::string fname = dir_.File(name);
    EXPECT_TRUE(WriteStringToFile(Env::Default(), data, fname, /*sync=*/false).ok());
    std::unique_ptr<RandomAccessFile> probe;
    const Status p = NewPosixDirectRandomAccessFile(fname, IOPriority::kHigh, &probe);
    EXPECT_TRUE(p.ok() || p.IsInvalidArgument()) << p.ToString();
    *direct = p.ok();
    RandomAccessFileOptions options;
    options.use_direct_reads = true;
    std::unique_ptr<RandomAccessFile> f;
    const Status s = Env::Default()->NewRandomAccessFile(fname, options, &f);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return f;
  }

  // Reads n bytes at offset into buf + at and checks them against data: the
  // bytes that exist (none past the end), in scratch, and nothing written
  // past scratch + n.
  static void ExpectRead(const RandomAccessFile& f, const std::string& data, uint64_t offset,
                         size_t n, char* buf, size_t at) {
    SCOPED_TRACE("read of " + std::to_string(n) + " at " + std::to_string(offset) +
                 " into scratch + " + std::to_string(at));
    char* scratch = buf + at;
    std::memset(scratch + n, 0x5a, 64);
    Slice r;
    const Status s = f.Read(offset, n, &r, scratch);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const size_t expect = offset >= data.size() ? 0 : std::min<size_t>(n, data.size() - offset);
    ASSERT_EQ(expect, r.size());
    EXPECT_EQ(scratch, r.data());
    if (expect > 0) {
      ASSERT_TRUE(std::memcmp(r.data(), data.data() + offset, expect) == 0);
    }
    for (size_t i = 0; i < 64; ++i) ASSERT_EQ(0x5a, static_cast<unsigned char>(scratch[n + i]));
  }

  test::TempDir dir_;
};

// Every kind of request returns exactly the file's bytes: aligned or not
// (offset, length, scratch address), across 4 KiB boundaries and the 1 MiB
// bounce buffer's pieces, zero-length, at and past the end, and aligned
// reads whose cover ends past the end of the file (a short O_DIRECT count).
// The aligned requests take the zero-copy path, the others the bounce
// buffer.
TEST_F(DirectReadTest, AnyRequestReturnsTheFilesBytes) {
  Random rnd(test::TestSeed());
  // Sizes: not a multiple of 4 KiB (a partial last block), a multiple, and
  // smaller than one block.
  for (size_t size : {size_t{2600000} + rnd.Uniform(kAlign), size_t{64} * kAlign, size_t{1000}}) {
    SCOPED_TRACE("file of " + std::to_string(size) + " bytes");
    const std::string data = test::RandomString(&rnd, size);
    bool direct = false;
    std::unique_ptr<RandomAccessFile> f = Open("direct-" + std::to_string(size), data, &direct);
    ASSERT_NE(nullptr, f);
    const size_t cap = (3u << 20) + 2 * kAlign;
    std::unique_ptr<char, decltype(&std::free)> buf(
        static_cast<char*>(std::aligned_alloc(kAlign, cap + kAlign)), &std::free);
    const DirectReadCounts before = GetDirectReadCounts();
    // The edges, then random requests.
    const uint64_t end = size;
    const uint64_t last_block = end / kAlign * kAlign;
    struct Request {
      uint64_t offset;
      size_t n;
      size_t at;
    };
    std::vector<Request> requests = {
        {0, 0, 0},
        {0, 0, 1},
        {end, 0, 0},
        {end, 10, 3},
        {end, kAlign, 0},
        {end + 5000, 10, 0},
        {uint64_t{1} << 40, kAlign, 0},
        {last_block, kAlign, 0},
        {last_block, 2 * kAlign, 0},
        {0, end, 0},
        {0, end, 7},
        {1, end, 0},
        {4095, 2, 0},
        {kAlign - 1, kAlign + 2, kAlign - 1},
        {0, kAlign, 0},
        {kAlign, kAlign, 1},
        {end - 1, 1, 0},
        {end - 1, 2 * kAlign, 0},
        {end > 5000 ? end - 5000 : 0, 1 << 20, 0},
    };
    for (int i = 0; i < 400; ++i) {
      Request q;
      q.offset = rnd.OneIn(2) ? kAlign * rnd.Uniform(end / kAlign + 2) : rnd.Uniform(end + 9000);
      q.n = rnd.OneIn(2) ? kAlign * rnd.Uniform(rnd.OneIn(8) ? 640 : 6)
                         : static_cast<size_t>(rnd.Uniform(rnd.OneIn(8) ? 2600000 : 20000));
      q.at = rnd.OneIn(2) ? 0 : rnd.Uniform(kAlign);
      requests.push_back(q);
    }
    for (const Request& q : requests) {
      ASSERT_LE(q.at + q.n, cap);
      ExpectRead(*f, data, q.offset, q.n, buf.get(), q.at);
      if (HasFatalFailure()) return;
    }
    const DirectReadCounts after = GetDirectReadCounts();
    if (direct) {
      // Both paths ran (a zero-length read takes neither).
      EXPECT_LT(before.aligned + 20, after.aligned);
      EXPECT_LT(before.bounced + 20, after.bounced);
    } else {
      std::printf("O_DIRECT refused under %s: the pread fallback was tested\n",
                  dir_.path().c_str());
    }
  }
}

// Which path a request takes: all of offset, length and scratch aligned ->
// straight into scratch; any one unaligned -> the bounce buffer.
TEST_F(DirectReadTest, AlignedRequestsGoStraightToScratch) {
  Random rnd(test::TestSeed());
  const std::string data = test::RandomString(&rnd, 5 * kAlign + 100);
  bool direct = false;
  std::unique_ptr<RandomAccessFile> f = Open("paths", data, &direct);
  ASSERT_NE(nullptr, f);
  if (!direct) GTEST_SKIP() << "O_DIRECT refused under " << dir_.path();
  std::unique_ptr<char, decltype(&std::free)> buf(
      static_cast<char*>(std::aligned_alloc(kAlign, 8 * kAlign)), &std::free);
  const struct {
    uint64_t offset;
    size_t n;
    size_t at;
    bool aligned;
  } cases[] = {{0, kAlign, 0, true},
               {kAlign, 2 * kAlign, 0, true},
               {4 * kAlign, 2 * kAlign, 0, true},  // through the end: a short count
               {1, kAlign, 0, false},
               {0, kAlign - 1, 0, false},
               {0, kAlign, 512, false},
               {5 * kAlign, 100, 0, false}};
  for (const auto& c : cases) {
    const DirectReadCounts before = GetDirectReadCounts();
    ExpectRead(*f, data, c.offset, c.n, buf.get(), c.at);
    const DirectReadCounts after = GetDirectReadCounts();
    EXPECT_EQ(c.aligned ? 1u : 0u, after.aligned - before.aligned) << c.offset << "+" << c.n;
    EXPECT_EQ(c.aligned ? 0u : 1u, after.bounced - before.bounced) << c.offset << "+" << c.n;
  }
  EXPECT_TRUE(f->Prefetch(0, data.size()).ok());
  EXPECT_TRUE(f->Prefetch(1, 12345).ok());
}

// Read is safe for concurrent use: threads reading random ranges of one
// file, aligned and not, all get the file's bytes.
TEST_F(DirectReadTest, ConcurrentReadsGetTheFilesBytes) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  const std::string data = test::RandomString(&rnd, (1u << 20) + 777);
  bool direct = false;
  std::unique_ptr<RandomAccessFile> f = Open("concurrent", data, &direct);
  ASSERT_NE(nullptr, f);
  constexpr int kThreads = 4;
  std::vector<int> bad(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Random r(seed + static_cast<uint64_t>(t) + 1);
      const size_t cap = 73 * kAlign;  // aligned_alloc takes a multiple of the alignment
      std::unique_ptr<char, decltype(&std::free)> buf(
          static_cast<char*>(std::aligned_alloc(kAlign, cap + kAlign)), &std::free);
      for (int i = 0; i < 300; ++i) {
        const bool aligned = r.OneIn(2);
        const uint64_t offset =
            aligned ? kAlign * r.Uniform(data.size() / kAlign + 1) : r.Uniform(data.size() + 100);
        const size_t n =
            aligned ? kAlign * r.Uniform(cap / kAlign) : static_cast<size_t>(r.Uniform(cap));
        char* scratch = buf.get() + (aligned ? 0 : r.Uniform(kAlign));
        Slice got;
        if (!f->Read(offset, n, &got, scratch).ok()) {
          ++bad[t];
          continue;
        }
        const size_t expect = offset >= data.size() ? 0 : std::min<size_t>(n, data.size() - offset);
        if (got.size() != expect || got.data() != scratch ||
            (expect > 0 && std::memcmp(got.data(), data.data() + offset, expect) != 0)) {
          ++bad[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(0, bad[t]) << "thread " << t;
}

// A missing file is NotFound, as with every other open (PosixError).
TEST_F(DirectReadTest, MissingFileIsNotFound) {
  RandomAccessFileOptions options;
  options.use_direct_reads = true;
  std::unique_ptr<RandomAccessFile> f;
  Status s = Env::Default()->NewRandomAccessFile(dir_.File("missing"), options, &f);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(nullptr, f);
  EXPECT_NE(std::string::npos, s.ToString().find(dir_.File("missing")));
  s = NewPosixDirectRandomAccessFile(dir_.File("missing"), IOPriority::kHigh, &f);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(nullptr, f);
}

}  // namespace
}  // namespace accelkv
