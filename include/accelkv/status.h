// Status: the result of an operation: OK, or an error code with a message.
// No exceptions cross the API; every fallible call returns a Status.
//
// Thread safety: const methods may be called concurrently; a non-const
// Status must not be shared without synchronization.
#pragma once

#include <memory>
#include <string>

#include "accelkv/slice.h"

namespace accelkv {

class Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound = 1,
    kCorruption = 2,
    kNotSupported = 3,
    kInvalidArgument = 4,
    kIOError = 5,
    kBusy = 6,
    kAborted = 7,
  };

  Status() noexcept = default;  // OK
  Status(const Status& rhs);
  Status& operator=(const Status& rhs);
  Status(Status&& rhs) noexcept = default;
  Status& operator=(Status&& rhs) noexcept = default;
  ~Status() = default;

  static Status OK() { return Status(); }
  static Status NotFound(const Slice& msg, const Slice& msg2 = Slice()) {
    return Status(Code::kNotFound, msg, msg2);
  }
  static Status Corruption(const Slice& msg, const Slice& msg2 = Slice()) {
    return Status(Code::kCorruption, msg, msg2);
  }
  static Status NotSupported(const Slice& msg, const Slice& msg2 = Slice()) {
    return Status(Code::kNotSupported, msg, msg2);
  }
  static Status InvalidArgument(const Slice& msg, const Slice& msg2 = Slice()) {
    return Status(Code::kInvalidArgument, msg, msg2);
  }
  static Status IOError(const Slice& msg, const Slice& msg2 = Slice()) {
    return Status(Code::kIOError, msg, msg2);
  }
  static Status Busy(const Slice& msg, const Slice& msg2 = Slice()) {
    return Status(Code::kBusy, msg, msg2);
  }
  static Status Aborted(const Slice& msg, const Slice& msg2 = Slice()) {
    return Status(Code::kAborted, msg, msg2);
  }

  bool ok() const { return state_ == nullptr; }
  bool IsNotFound() const { return code() == Code::kNotFound; }
  bool IsCorruption() const { return code() == Code::kCorruption; }
  bool IsNotSupported() const { return code() == Code::kNotSupported; }
  bool IsInvalidArgument() const { return code() == Code::kInvalidArgument; }
  bool IsIOError() const { return code() == Code::kIOError; }
  bool IsBusy() const { return code() == Code::kBusy; }
  bool IsAborted() const { return code() == Code::kAborted; }

  Code code() const { return state_ == nullptr ? Code::kOk : state_->code; }
  // The message without the code prefix; empty for OK.
  std::string message() const { return state_ == nullptr ? std::string() : state_->msg; }
  // "OK", or e.g. "Corruption: bad block checksum: 000012.sst".
  std::string ToString() const;

 private:
  struct State {
    Code code;
    std::string msg;
  };
  Status(Code code, const Slice& msg, const Slice& msg2);

  std::unique_ptr<State> state_;  // nullptr means OK
};

}  // namespace accelkv
