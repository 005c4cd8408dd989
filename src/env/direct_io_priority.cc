#include "env/direct_io_priority.h"

#include <algorithm>
#include <cstdlib>

namespace accelkv {

namespace {

int LimitFromEnvironment() {
  const char* v = std::getenv("ACCELKV_DIRECT_IO_LOW_IN_FLIGHT");
  if (v == nullptr || *v == '\0') return kDefaultLowInFlightWhileHigh;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > 4096) return kDefaultLowInFlightWhileHigh;
  return static_cast<int>(n);
}

}  // namespace

DirectIoPriorityGate* DirectIoPriorityGate::Get() {
  static DirectIoPriorityGate* gate = new DirectIoPriorityGate(LimitFromEnvironment());
  return gate;
}

void DirectIoPriorityGate::HighFileOpened() {
  std::lock_guard<std::mutex> l(mu_);
  ++high_open_;
}

void DirectIoPriorityGate::HighFileClosed() {
  std::lock_guard<std::mutex> l(mu_);
  if (--high_open_ == 0) cv_.notify_all();
}

void DirectIoPriorityGate::AcquireLow() {
  std::unique_lock<std::mutex> l(mu_);
  ++counts_.low_admitted;
  if (Limited() && low_in_flight_ >= limit_) {
    ++counts_.low_waited;
    cv_.wait(l, [this] { return !Limited() || low_in_flight_ < limit_; });
  }
  ++low_in_flight_;
  if (high_open_ > 0) {
    counts_.max_low_in_flight_while_high =
        std::max(counts_.max_low_in_flight_while_high, low_in_flight_);
  }
}

void DirectIoPriorityGate::ReleaseLow() {
  std::lock_guard<std::mutex> l(mu_);
  --low_in_flight_;
  if (Limited()) cv_.notify_one();
}

DirectIoPriorityGate::Counts DirectIoPriorityGate::counts() const {
  std::lock_guard<std::mutex> l(mu_);
  return counts_;
}

}  // namespace accelkv
