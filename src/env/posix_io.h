// Helpers shared by the POSIX Env's files: the Status of a failed call, the
// loop that reads until n bytes, end of file or an error, and the loop that
// writes all n bytes.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "accelkv/slice.h"
#include "accelkv/status.h"

namespace accelkv {

// IOError(context, strerror(errno)), or NotFound for ENOENT (as LevelDB's
// PosixError), so a missing file reads as NotFound whatever the operation.
inline Status PosixError(const std::string& context, int error_number) {
  if (error_number == ENOENT) return Status::NotFound(context, std::strerror(error_number));
  return Status::IOError(context, std::strerror(error_number));
}

// Calls read_some(dst, len, done) (a read(2) or pread(2) of up to len bytes
// into dst, done bytes into the request) until n bytes are in scratch, end of
// file (a 0 return) or an error; EINTR is retried. *result = the bytes read.
template <typename ReadSome>
Status ReadFully(const std::string& fname, size_t n, char* scratch, Slice* result,
                 ReadSome read_some) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = read_some(scratch + done, n - done, done);
    if (r < 0) {
      if (errno == EINTR) continue;
      *result = Slice(scratch, 0);
      return PosixError(fname, errno);
    }
    if (r == 0) break;  // end of file
    done += static_cast<size_t>(r);
  }
  *result = Slice(scratch, done);
  return Status::OK();
}

// Calls write_some(src, len, done) (a write(2) or pwrite(2) of up to len
// bytes from src, done bytes into the request) until all n bytes of p are
// written or an error; EINTR is retried. A call that writes nothing (0 for
// a non-empty buffer, which Linux returns for no regular file but a file
// system may) is an IOError rather than a loop that never ends, as the
// direct file's short write is.
template <typename WriteSome>
Status WriteFully(const std::string& fname, const char* p, size_t n, WriteSome write_some) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = write_some(p + done, n - done, done);
    if (r < 0) {
      if (errno == EINTR) continue;
      return PosixError(fname, errno);
    }
    if (r == 0) return Status::IOError(fname, "write wrote no bytes");
    done += static_cast<size_t>(r);
  }
  return Status::OK();
}

}  // namespace accelkv
