#include "util/helper_threads.h"

#include <chrono>
#include <system_error>
#include <thread>

namespace accelkv {

HelperThreads* HelperThreads::Get() {
  static HelperThreads* const threads = new HelperThreads();  // never destroyed
  return threads;
}

bool HelperThreads::Run(std::function<void()> task) {
  std::unique_lock<std::mutex> l(mu_);
  queue_.push_back(std::move(task));
  if (queue_.size() <= idle_) {
    l.unlock();
    cv_.notify_one();
    return true;
  }
  ++threads_;
  try {
    std::thread([this] { Loop(); }).detach();
  } catch (const std::system_error&) {
    --threads_;
    queue_.pop_back();
    return false;
  }
  return true;
}

size_t HelperThreads::threads() const {
  std::lock_guard<std::mutex> l(mu_);
  return threads_;
}

size_t HelperThreads::idle() const {
  std::lock_guard<std::mutex> l(mu_);
  return idle_;
}

void HelperThreads::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    if (queue_.empty()) {
      ++idle_;
      const bool woken =
          cv_.wait_for(l, std::chrono::seconds(kIdleSeconds), [this] { return !queue_.empty(); });
      --idle_;
      if (!woken) break;
    }
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    l.unlock();
    task();
    task = nullptr;  // the task's captures go before the lock is taken
    l.lock();
  }
  --threads_;
}

}  // namespace accelkv
