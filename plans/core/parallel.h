#pragma once
/// Splitting independent per-node work over the machine's cores: plan and drift at 10,000 nodes
/// must finish in under a second on 2 cores, and most of their work is per node.
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <type_traits>
#include <thread>
#include <vector>

namespace plumb::plans {

/// Threads worth using: the cores, at least 1, at most 8.
size_t Cores();

/// Calls `work(begin, end, chunk)` over [0, count) cut into one contiguous range per core
/// (chunk = 0, 1, ...), the first on the calling thread, and returns when all are done. Fewer
/// than `min_parallel` items run as one range on the calling thread (threads cost more).
void ForEachRange(size_t count, size_t min_parallel,
                  const std::function<void(size_t begin, size_t end, size_t chunk)>& work);

/// How many ranges ForEachRange(count, min_parallel, ...) makes: size per-chunk results by it.
size_t RangeCount(size_t count, size_t min_parallel);

/// Calls `work(i)` for every i in [0, count) on at most `fanout` threads (the calling thread
/// one of them), each taking the next index when it is free: for work that waits (a node's SSH
/// round trip), where `fanout` bounds how many nodes are worked on at once. One round of a
/// WorkerPool (below), so a call that throws reaches the caller the same way.
void ForEachBounded(size_t count, int fanout, const std::function<void(size_t i)>& work);

/// ForEachBounded on threads that stay: for work handed over in many small rounds (nodes as a
/// snapshot is parsed), where a thread started per round costs more than the round (and each
/// new thread starts a fresh allocator heap).
class WorkerPool {
 public:
  /// `helpers` threads besides the caller's (0: the caller does everything).
  explicit WorkerPool(size_t helpers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Calls `work(i)` for every i in [0, count), on the helpers and the calling thread, each
  /// taking the next index when it is free; returns when all are done. If a call throws, the
  /// indices not yet taken are skipped and, once every running call has ended, the first
  /// exception is rethrown here.
  void ForEach(size_t count, const std::function<void(size_t i)>& work);

 private:
  struct Shared;
  std::unique_ptr<Shared> shared_;
  std::vector<std::thread> threads_;
};

/// Jobs handed to threads that stay, each one's result (or exception) coming back through its
/// future: for pipelines that keep a few jobs in flight and take the results in order (a
/// snapshot's node lines parsed ahead of the planner, report pieces rendered ahead of the
/// write). std::async started a thread, and so a fresh allocator heap, per job: at 100,000
/// nodes, ~800 of each per run.
class JobThreads {
 public:
  explicit JobThreads(size_t threads);
  /// Runs the jobs still queued (their futures may be gone), then joins: a job may refer to
  /// what outlives this object and nothing else.
  ~JobThreads();
  JobThreads(const JobThreads&) = delete;
  JobThreads& operator=(const JobThreads&) = delete;

  template <typename Job>
  std::future<std::invoke_result_t<Job>> Submit(Job job) {
    auto task = std::make_shared<std::packaged_task<std::invoke_result_t<Job>()>>(std::move(job));
    auto result = task->get_future();
    Push([task] { (*task)(); });
    return result;
  }

 private:
  void Push(std::function<void()> job);
  void Start(size_t threads);
  void StopAndJoin();
  struct Shared;
  std::unique_ptr<Shared> shared_;
  std::vector<std::thread> threads_;
};

}  // namespace plumb::plans
