#include "accelkv/status.h"

namespace accelkv {

Status::Status(Code code, const Slice& msg, const Slice& msg2)
    : state_(std::make_unique<State>()) {
  state_->code = code;
  state_->msg = msg.ToString();
  if (!msg2.empty()) {
    state_->msg.append(": ");
    state_->msg.append(msg2.data(), msg2.size());
  }
}

Status::Status(const Status& rhs)
    : state_(rhs.state_ ? std::make_unique<State>(*rhs.state_) : nullptr) {}

Status& Status::operator=(const Status& rhs) {
  if (this != &rhs) state_ = rhs.state_ ? std::make_unique<State>(*rhs.state_) : nullptr;
  return *this;
}

std::string Status::ToString() const {
  if (state_ == nullptr) return "OK";
  const char* type = "";
  switch (state_->code) {
    case Code::kOk: type = "OK"; break;
    case Code::kNotFound: type = "NotFound: "; break;
    case Code::kCorruption: type = "Corruption: "; break;
    case Code::kNotSupported: type = "Not implemented: "; break;
    case Code::kInvalidArgument: type = "Invalid argument: "; break;
    case Code::kIOError: type = "IO error: "; break;
    case Code::kBusy: type = "Busy: "; break;
    case Code::kAborted: type = "Aborted: "; break;
  }
  return std::string(type) + state_->msg;
}

}  // namespace accelkv
