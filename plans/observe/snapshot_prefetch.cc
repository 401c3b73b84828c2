#include "plans/observe/snapshot_prefetch.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace plumb::plans {

SnapshotPrefetch::SnapshotPrefetch(std::string path, size_t max_ahead, size_t max_ahead_bytes,
                                   size_t workers)
    : path_(std::move(path)),
      max_ahead_(std::max<size_t>(max_ahead, 1)),
      max_ahead_bytes_(std::max<size_t>(max_ahead_bytes, 1)),
      workers_(workers) {
  reader_ = std::thread([this] { Read(); });
}

SnapshotPrefetch::~SnapshotPrefetch() {
  {
    // Under the lock: the reader checks stop_ and then waits, atomically with respect to this.
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (reader_.joinable()) reader_.join();
}

void SnapshotPrefetch::Read() {
  ReadOptions opt;
  opt.workers = workers_;
  opt.stop = &stop_;
  std::optional<Result<ObservedState>> header;
  try {
    header = ReadObservedState(
        path_,
        [this](NodeObservation&& n) {
          std::unique_lock lock(mu_);
          // Room for one more, by count and by bytes (the first node always gets in).
          changed_.wait(lock, [this] {
            return (queue_.size() < max_ahead_ &&
                    (queue_.empty() || queued_bytes_ < max_ahead_bytes_)) ||
                   stop_.load();
          });
          if (stop_) return;   // nobody will drain it; the reader sees stop_ and ends
          queued_bytes_ += n.source_bytes;
          queue_.push_back(std::move(n));
          changed_.notify_all();
        },
        opt);
  } catch (const std::exception& e) {
    // Nothing may escape a thread (std::terminate): the error goes to Drain like any other.
    header = SnapshotError(fmt::format("reading '{}' failed: {}", path_, e.what()));
  }
  std::lock_guard lock(mu_);
  header_ = std::move(header);
  done_ = true;
  changed_.notify_all();
}

Result<ObservedState> SnapshotPrefetch::Drain(const ObservationSink& each) {
  return DrainInBatches(1, [&each](std::vector<NodeObservation>&& nodes) {
    for (NodeObservation& n : nodes) each(std::move(n));
  });
}

Result<ObservedState> SnapshotPrefetch::DrainInBatches(size_t most, const BatchSink& each) {
  most = std::max<size_t>(most, 1);
  for (;;) {
    std::vector<NodeObservation> next;
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [this] { return !queue_.empty() || done_; });
      if (queue_.empty()) break;   // done_ and nothing left
      while (!queue_.empty() && next.size() < most) {
        queued_bytes_ -= queue_.front().source_bytes;
        next.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      changed_.notify_all();
    }
    each(std::move(next));
  }
  reader_.join();
  return std::move(*header_);
}

}  // namespace plumb::plans
