// The Status of a failed POSIX call: IOError(context, strerror(errno)), or
// NotFound for ENOENT (as LevelDB's PosixError), so a missing file reads as
// NotFound whatever the operation.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>

#include "accelkv/status.h"

namespace accelkv {

inline Status PosixError(const std::string& context, int error_number) {
  if (error_number == ENOENT) return Status::NotFound(context, std::strerror(error_number));
  return Status::IOError(context, std::strerror(error_number));
}

}  // namespace accelkv
