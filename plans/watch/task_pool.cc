#include "plans/watch/task_pool.h"

#include <algorithm>

namespace plumb::plans::watch {

ThreadPool::ThreadPool(int workers) : threads_(static_cast<size_t>(std::max(workers, 1))) {}

ThreadPool::~ThreadPool() { Drain(); }

void ThreadPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++unfinished_;
  }
  // noexcept: a task's exception ends the process here instead of vanishing into a future
  // nobody reads (and leaving Drain waiting for ever). The future is not needed: tasks report
  // back on their own.
  try {
    (void)threads_.Submit([this, task = std::move(task)]() mutable noexcept {
      task();
      task = nullptr;   // whatever it captured goes before the caller hears it is done
      {
        std::lock_guard<std::mutex> lock(mu_);
        --unfinished_;
        ++finished_;
      }
      done_cv_.notify_all();
    });
  } catch (...) {   // not queued (no memory): Drain must not wait for it
    std::lock_guard<std::mutex> lock(mu_);
    --unfinished_;
    throw;
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
  done_cv_.wait(lock, [this] { return unfinished_ == 0; });
}

}  // namespace plumb::plans::watch
