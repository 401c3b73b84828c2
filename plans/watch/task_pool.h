#pragma once
/// Where the watch's probes run: a fixed set of worker threads in the real run (ThreadPool), the
/// calling thread in unit tests (tests/fakes/inline_pool.h), so the watch loop is the same code
/// in both and its tests need no real time.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "plans/core/parallel.h"

namespace plumb::plans::watch {

class TaskPool {
 public:
  virtual ~TaskPool() = default;
  /// Runs `task` soon (on a worker) or now (inline). Tasks report back on their own.
  virtual void Submit(std::function<void()> task) = 0;
  /// Returns once a task finished since the last call, or after `d`, whichever comes first.
  /// May return earlier (a real pool wakes at least every quarter second, so the caller sees a
  /// stop request promptly).
  virtual void WaitForAny(std::chrono::milliseconds d) = 0;
  /// Returns once every submitted task has finished.
  virtual void Drain() = 0;
};

/// `workers` threads (the watch's --fanout): at most that many probes, and so SSH handshakes
/// at start-up, run at once. The threads are plans::JobThreads'; this adds what the watch loop
/// waits on (a task finished, all of them finished). A task that throws ends the process, as
/// an exception escaping any thread would. Drains, then joins its threads, on destruction.
class ThreadPool final : public TaskPool {
 public:
  explicit ThreadPool(int workers);
  ~ThreadPool() override;

  void Submit(std::function<void()> task) override;
  void WaitForAny(std::chrono::milliseconds d) override;
  void Drain() override;

 private:
  std::mutex mu_;
  std::condition_variable done_cv_;
  size_t unfinished_ = 0;
  unsigned long long finished_ = 0, seen_ = 0;
  JobThreads threads_;   // last: its threads are joined before what they use goes
};

}  // namespace plumb::plans::watch
