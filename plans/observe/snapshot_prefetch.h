#pragma once
/// Reading a facts snapshot ahead, while the caller does something else (loads the cluster
/// repo): the snapshot is parsed on a background thread into a bounded queue, and Drain hands
/// the nodes over on the caller's thread, in file order. On 2 cores the repo load used one core
/// and left the other idle; now that core parses the first nodes meanwhile.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "plans/observe/observed.h"

namespace plumb::plans {

class SnapshotPrefetch {
 public:
  /// Starts reading `path` now. At most `max_ahead` parsed nodes, read from at most
  /// `max_ahead_bytes` of snapshot text, wait for Drain (parsed, a node takes ~7x its text);
  /// the reader uses `workers` parsing threads (0: one per core).
  SnapshotPrefetch(std::string path, size_t max_ahead, size_t max_ahead_bytes, size_t workers);
  /// Stops the reader (if Drain was never called or returned early) and waits for it.
  ~SnapshotPrefetch();
  SnapshotPrefetch(const SnapshotPrefetch&) = delete;
  SnapshotPrefetch& operator=(const SnapshotPrefetch&) = delete;

  /// Every node, to `each` on this thread in file order, then the header (or the first
  /// problem; nodes before it were already handed over, as with ReadObservedState). Call once.
  Result<ObservedState> Drain(const ObservationSink& each);
  /// The same, handing over every node parsed so far at once (at least one, at most `most`),
  /// so the caller can work on them on several threads.
  using BatchSink = std::function<void(std::vector<NodeObservation>&& nodes)>;
  Result<ObservedState> DrainInBatches(size_t most, const BatchSink& each);

 private:
  void Read();

  const std::string path_;
  const size_t max_ahead_;
  const size_t max_ahead_bytes_;
  const size_t workers_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<NodeObservation> queue_;
  size_t queued_bytes_ = 0;
  bool done_ = false;
  std::optional<Result<ObservedState>> header_;
  std::thread reader_;
};

}  // namespace plumb::plans
