#include "util/helper_threads.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <system_error>
#include <thread>

namespace accelkv {

namespace {
std::atomic<HelperThreads*> g_instance{nullptr};
std::once_flag g_instance_once;
}  // namespace

HelperThreads* HelperThreads::Get() {
  std::call_once(g_instance_once, [] {
    g_instance.store(new HelperThreads(), std::memory_order_release);  // never destroyed
    // A forked child has none of the parent's threads, and another thread
    // may have held mu_ at the fork: the child starts from a fresh object
    // (the parent's copy is leaked), or its tasks would go to threads that
    // are not there (the crash tests write from a forked child).
    pthread_atfork(nullptr, nullptr,
                   [] { g_instance.store(new HelperThreads(), std::memory_order_release); });
  });
  return g_instance.load(std::memory_order_acquire);
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

void HelperThreads::ReleaseIdle() {
  std::lock_guard<std::mutex> l(mu_);
  ++release_;
  cv_.notify_all();
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
      const uint64_t release = release_;
      const bool woken = cv_.wait_for(l, std::chrono::seconds(kIdleSeconds),
                                      [&] { return !queue_.empty() || release_ != release; });
      --idle_;
      if (!woken || queue_.empty()) break;  // idle too long, or released
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
