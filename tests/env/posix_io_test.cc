#include "env/posix_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace accelkv {
namespace {

// The write loop: short writes go on from where they stopped, EINTR is
// retried, an error is the call's, and a write of no bytes is an error
// rather than a loop that never ends.
TEST(PosixIo, WriteFullyLoopsRetriesAndStops) {
  const std::string data = "0123456789abcdefghij";
  std::string got;
  std::vector<size_t> dones;
  int calls = 0;
  Status s = WriteFully("f", data.data(), data.size(),
                        [&](const char* src, size_t len, size_t done) -> ssize_t {
                          dones.push_back(done);
                          if (++calls == 2) {
                            errno = EINTR;
                            return -1;
                          }
                          const size_t n = std::min<size_t>(len, 7);  // short writes
                          got.append(src, n);
                          return static_cast<ssize_t>(n);
                        });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(data, got);
  EXPECT_EQ((std::vector<size_t>{0, 7, 7, 14}), dones);

  s = WriteFully("f", data.data(), data.size(), [](const char*, size_t, size_t) -> ssize_t {
    errno = ENOSPC;
    return -1;
  });
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(std::strerror(ENOSPC))) << s.ToString();

  // Half, then nothing (then, were the 0 retried, the rest: the test fails
  // rather than hangs).
  calls = 0;
  s = WriteFully("f", data.data(), data.size(), [&](const char*, size_t len, size_t) -> ssize_t {
    ++calls;
    return calls == 1 ? static_cast<ssize_t>(len / 2) : calls == 2 ? 0 : static_cast<ssize_t>(len);
  });
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_EQ(2, calls);

  // Nothing to write: no call.
  s = WriteFully("f", data.data(), 0, [](const char*, size_t, size_t) -> ssize_t { return -1; });
  EXPECT_TRUE(s.ok());
}

// The read loop: short reads go on, a 0 return is the end of the file,
// EINTR is retried, and an error is the call's (NotFound for ENOENT).
TEST(PosixIo, ReadFullyStopsAtEndOfFile) {
  const std::string file = "the file's bytes";
  std::string scratch(64, '\0');
  Slice result;
  int calls = 0;
  Status s = ReadFully("f", scratch.size(), scratch.data(), &result,
                       [&](char* dst, size_t len, size_t done) -> ssize_t {
                         if (++calls == 1) {
                           errno = EINTR;
                           return -1;
                         }
                         const size_t n = std::min<size_t>({len, 5, file.size() - done});
                         std::memcpy(dst, file.data() + done, n);
                         return static_cast<ssize_t>(n);
                       });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(file, result.ToString());

  s = ReadFully("f", scratch.size(), scratch.data(), &result, [](char*, size_t, size_t) -> ssize_t {
    errno = ENOENT;
    return -1;
  });
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(0u, result.size());
}

}  // namespace
}  // namespace accelkv
