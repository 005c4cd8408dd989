// ThreadPool: a fixed set of threads running queued jobs in FIFO order.
// Used for flushes and compactions.
//
// Thread safety: Schedule may be called from any thread. The destructor
// finishes queued jobs, then joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace accelkv {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads) {
    for (int i = 0; i < num_threads; i++) threads_.emplace_back([this] { Loop(); });
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void Schedule(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> l(mu_);
      queue_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

  int size() const { return static_cast<int>(threads_.size()); }

 private:
  void Loop() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stop_ and drained
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace accelkv
