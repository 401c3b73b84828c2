#include "plans/watch/task_pool.h"

#include <algorithm>

namespace plumb::plans::watch {

ThreadPool::ThreadPool(int workers) {
  const int n = std::max(workers, 1);
  threads_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() {
  Drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  work_cv_.notify_one();
}

void ThreadPool::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return quit_ || !queue_.empty(); });
    if (queue_.empty()) return;   // quit, and nothing left to run
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    task();
    task = nullptr;   // whatever it captured goes before the caller hears it is done
    lock.lock();
    --running_;
    ++finished_;
    done_cv_.notify_all();
  }
}

void ThreadPool::WaitForAny(std::chrono::milliseconds d) {
  // A quarter second at most: the caller polls its stop and reload flags between waits.
  const auto wait = std::min(d, std::chrono::milliseconds(250));
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait_for(lock, wait, [this] { return finished_ != seen_; });
  seen_ = finished_;
}

void ThreadPool::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
}

}  // namespace plumb::plans::watch
