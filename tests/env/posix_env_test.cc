// PosixEnv behaviour that MemEnv does not model: locks against other
// processes, OS error reporting, files written by other means.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>

#include <memory>

#include <cstdlib>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "accelkv/env.h"
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

}  // namespace
}  // namespace accelkv
