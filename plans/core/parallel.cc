#include "plans/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace plumb::plans {

size_t Cores() { return std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8); }

size_t RangeCount(size_t count, size_t min_parallel) {
  if (count == 0) return 0;
  return count < min_parallel ? 1 : std::min(Cores(), count);
}

void ForEachRange(size_t count, size_t min_parallel,
                  const std::function<void(size_t begin, size_t end, size_t chunk)>& work) {
  const size_t ranges = RangeCount(count, min_parallel);
  if (ranges == 0) return;
  const size_t per = (count + ranges - 1) / ranges;
  std::vector<std::future<void>> others;
  for (size_t c = 1; c < ranges; ++c) {
    const size_t begin = std::min(count, c * per), end = std::min(count, begin + per);
    others.push_back(std::async(std::launch::async, [&work, begin, end, c] { work(begin, end, c); }));
  }
  work(0, std::min(count, per), 0);
  for (auto& f : others) f.get();   // rethrows a worker's exception here
}

struct WorkerPool::Shared {
  std::mutex mu;
  std::condition_variable wake, finished;
  const std::function<void(size_t)>* work = nullptr;   // the round in progress, if any
  size_t count = 0;
  std::atomic<size_t> next{0};
  size_t busy = 0;            // helpers inside the current round
  unsigned long round = 0;    // bumped per ForEach: a helper joins each round once
  bool stop = false;
  std::exception_ptr failed;  // the round's first exception; the rest of its indices are skipped

  // Never throws: an exception must not leave a helper thread (std::terminate) nor unwind the
  // caller while helpers still run `work` (which lives in the caller's frame).
  void Run() {
    for (size_t i = next++; i < count; i = next++) {
      try {
        (*work)(i);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failed) failed = std::current_exception();
        next = count;
      }
    }
  }
};

WorkerPool::WorkerPool(size_t helpers) : shared_(std::make_unique<Shared>()) {
  for (size_t t = 0; t < helpers; ++t)
    threads_.emplace_back([s = shared_.get()] {
      unsigned long seen = 0;
      std::unique_lock lock(s->mu);
      for (;;) {
        s->wake.wait(lock, [&] { return s->stop || (s->work && s->round != seen); });
        if (s->stop) return;
        seen = s->round;
        ++s->busy;
        lock.unlock();
        s->Run();
        lock.lock();
        if (--s->busy == 0) s->finished.notify_all();
      }
    });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(shared_->mu);
    shared_->stop = true;
  }
  shared_->wake.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::ForEach(size_t count, const std::function<void(size_t i)>& work) {
  Shared& s = *shared_;
  {
    std::lock_guard lock(s.mu);
    s.work = &work;
    s.count = count;
    s.next = 0;
    s.failed = nullptr;
    ++s.round;
  }
  s.wake.notify_all();
  s.Run();
  // Every index is taken; wait for helpers still finishing theirs, then close the round so a
  // helper that wakes late does not join it. Then a failure is the caller's, as with
  // ForEachRange.
  std::unique_lock lock(s.mu);
  s.finished.wait(lock, [&] { return s.busy == 0; });
  s.work = nullptr;
  if (std::exception_ptr e = std::exchange(s.failed, nullptr)) {
    lock.unlock();
    std::rethrow_exception(e);
  }
}

struct JobThreads::Shared {
  std::mutex mu;
  std::condition_variable wake;
  std::deque<std::function<void()>> queue;
  bool stop = false;
};

JobThreads::JobThreads(size_t threads) : shared_(std::make_unique<Shared>()) {
  try {
    Start(std::max<size_t>(threads, 1));
  } catch (...) {   // a thread that could not start: the ones that did are stopped, not leaked
    StopAndJoin();
    throw;
  }
}

void JobThreads::Start(size_t threads) {
  for (size_t t = 0; t < threads; ++t)
    threads_.emplace_back([s = shared_.get()] {
      std::unique_lock lock(s->mu);
      for (;;) {
        s->wake.wait(lock, [s] { return s->stop || !s->queue.empty(); });
        if (s->queue.empty()) return;   // stopping, and nothing left to run
        std::function<void()> job = std::move(s->queue.front());
        s->queue.pop_front();
        lock.unlock();
        job();   // a packaged_task: what the job throws goes to its future
        lock.lock();
      }
    });
}

JobThreads::~JobThreads() { StopAndJoin(); }

void JobThreads::StopAndJoin() {
  {
    std::lock_guard lock(shared_->mu);
    shared_->stop = true;
  }
  shared_->wake.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void JobThreads::Push(std::function<void()> job) {
  {
    std::lock_guard lock(shared_->mu);
    shared_->queue.push_back(std::move(job));
  }
  shared_->wake.notify_one();
}

void ForEachBounded(size_t count, int fanout, const std::function<void(size_t i)>& work) {
  if (count == 0) return;
  // One round of a pool sized for it: the calling thread is one of the workers.
  const size_t threads = std::clamp<size_t>(fanout < 1 ? 1 : static_cast<size_t>(fanout), 1, count);
  WorkerPool(threads - 1).ForEach(count, work);
}

}  // namespace plumb::plans
