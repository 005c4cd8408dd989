// WritableFileOptions::use_mmap_writes on the POSIX Env
// (src/env/posix_mmap_writable_file.h): appended bytes are in the file at
// once, with zeros after them until Close, which truncates to the bytes
// appended; a process killed before Close leaves its data and a zero tail.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "accelkv/env.h"
#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

std::unique_ptr<WritableFile> OpenMapped(const std::string& fname) {
  WritableFileOptions options;
  options.use_mmap_writes = true;
  std::unique_ptr<WritableFile> file;
  const Status s = Env::Default()->NewWritableFile(fname, options, &file);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return file;
}

// The file starts with `expected` and holds only zeros after it.
void ExpectDataThenZeros(const std::string& fname, const std::string& expected) {
  std::string got;
  ASSERT_TRUE(ReadFileToString(Env::Default(), fname, &got).ok());
  ASSERT_GE(got.size(), expected.size());
  ASSERT_TRUE(got.compare(0, expected.size(), expected) == 0) << "data differs";
  EXPECT_EQ(got.find_first_not_of('\0', expected.size()), std::string::npos) << "tail not zero";
}

TEST(PosixMmapWritableFile, HoldsExactlyTheBytesAppended) {
  test::TempDir dir;
  Random rnd(test::TestSeed());
  for (int iter = 0; iter < 20; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    const std::string fname = dir.File("mmap-" + std::to_string(iter));
    std::unique_ptr<WritableFile> file = OpenMapped(fname);
    ASSERT_NE(file, nullptr);
    std::string expected;
    const int appends = 1 + static_cast<int>(rnd.Uniform(40));
    for (int a = 0; a < appends; ++a) {
      // 0 bytes to 1.5 MiB: within a window, across one, across several.
      const size_t n = rnd.OneIn(4) ? rnd.Uniform(1600000) : rnd.Uniform(300);
      std::string data(n, '\0');
      for (char& c : data) c = static_cast<char>(rnd.Uniform(256));
      ASSERT_TRUE(file->Append(data).ok());
      expected += data;
      // Visible to readers at once, without Flush (the page cache holds it).
      if (rnd.OneIn(4)) {
        ExpectDataThenZeros(fname, expected);
      }
      if (rnd.OneIn(4)) {
        ASSERT_TRUE(file->Flush().ok());
      }
      if (rnd.OneIn(6)) {
        ASSERT_TRUE(file->Sync().ok());
        ExpectDataThenZeros(fname, expected);
      }
    }
    ASSERT_TRUE(file->Close().ok());
    std::string got;
    ASSERT_TRUE(ReadFileToString(Env::Default(), fname, &got).ok());
    ASSERT_EQ(got.size(), expected.size());
    ASSERT_TRUE(got == expected);
    EXPECT_TRUE(file->Close().ok()) << "a second Close is a no-op";
    EXPECT_TRUE(file->Append("x").IsIOError());
    EXPECT_TRUE(file->Flush().IsIOError());
    EXPECT_TRUE(file->Sync().IsIOError());
  }
}

TEST(PosixMmapWritableFile, EmptyFileAndDestructorClose) {
  test::TempDir dir;
  const std::string fname = dir.File("empty");
  ASSERT_TRUE(OpenMapped(fname)->Close().ok());
  uint64_t size = 99;
  ASSERT_TRUE(Env::Default()->GetFileSize(fname, &size).ok());
  EXPECT_EQ(size, 0u);
  {
    std::unique_ptr<WritableFile> file = OpenMapped(dir.File("dropped"));
    ASSERT_TRUE(file->Append("abc").ok());
  }  // destroyed without Close: closes and truncates
  std::string got;
  ASSERT_TRUE(ReadFileToString(Env::Default(), dir.File("dropped"), &got).ok());
  EXPECT_EQ(got, "abc");
  std::unique_ptr<WritableFile> file;
  WritableFileOptions options;
  options.use_mmap_writes = true;
  EXPECT_TRUE(
      Env::Default()->NewWritableFile(dir.File("no/such/dir/f"), options, &file).IsNotFound());
}

// Appends `data` to a mapped file in pieces and kills the process, with no
// Close and no Sync.
[[noreturn]] void AppendAndDie(const std::string& fname, const std::string& data) {
  std::unique_ptr<WritableFile> file = OpenMapped(fname);
  for (size_t at = 0; at < data.size(); at += 97) {
    if (!file->Append(Slice(data.data() + at, std::min<size_t>(97, data.size() - at))).ok()) {
      ::_exit(2);
    }
  }
  ::raise(SIGKILL);
  ::_exit(3);
}

// A process killed after its appends (no Close, no Sync): the data is in
// the file, followed by the window's zeros.
TEST(PosixMmapWritableFile, KilledWriterLeavesItsDataAndAZeroTail) {
  // The writer is this binary run again for this test alone (fork, then
  // exec), a process without the threads earlier tests left in this one:
  // TSan stops a forked child of a threaded process that starts a thread,
  // as the mapped file's window helper does (seen running the whole
  // env_test under TSan; ctest runs each test in a process of its own).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The writer runs this body again from the top: it takes the directory
  // from the environment rather than making one of its own.
  constexpr char kDirVar[] = "ACCELKV_KILLED_WRITER_DIR";
  const char* inherited = std::getenv(kDirVar);
  std::unique_ptr<test::TempDir> dir;
  if (inherited == nullptr) {
    dir = std::make_unique<test::TempDir>();
    ASSERT_EQ(0, ::setenv(kDirVar, dir->path().c_str(), 1));
  }
  const std::string fname = (dir != nullptr ? dir->path() : std::string(inherited)) + "/killed";
  std::string expected;
  for (int i = 0; i < 5000; ++i) expected += "record " + std::to_string(i) + ";";
  EXPECT_EXIT(AppendAndDie(fname, expected), ::testing::KilledBySignal(SIGKILL), "");
  ::unsetenv(kDirVar);
  ExpectDataThenZeros(fname, expected);
  uint64_t size = 0;
  ASSERT_TRUE(Env::Default()->GetFileSize(fname, &size).ok());
  EXPECT_GT(size, expected.size()) << "the window's allocated tail is still there";
}

}  // namespace
}  // namespace accelkv
