// PosixEnv behaviour that MemEnv does not model: locks against other
// processes, OS error reporting, files written by other means.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "accelkv/env.h"
#include "testutil/test_util.h"

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

}  // namespace
}  // namespace accelkv
