#pragma once
/// Keeps the cluster lock of a running apply fresh: its expiry `ttl` ahead, renewed every ttl/5
/// (at most every minute) on a thread of its own, released at the end.
///
/// Renewals are fenced on the whole owner (Journal::RenewLock): a process whose run was taken
/// over elsewhere after expiry learns it at its next renewal. A runner that has lost the lock,
/// or cannot renew it, is no longer entitled to the cluster: another runner may take the run
/// over once the lock expires. So Expiring() turns true, for good, when
///   - the lock is lost (another process holds the cluster, or this run);
///   - a renewal fails because the store does not answer (the journal has already waited out
///     its retry window: "journal.unreachable");
///   - most of the ttl (4/5) has passed since the last renewal, whatever the reason (a store
///     that answers with errors, a process stopped and continued).
/// The engine then stops (RolloutDeps::lock_expiring): no new node starts, each node in progress
/// stops before its next step, and node leases are no longer renewed.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "plans/store/journal.h"

namespace plumb::plans {

class LockKeeper {
 public:
  using Steady = std::chrono::steady_clock;
  struct Options {
    /// Between renewals; zero: ttl/5, from 1 s to 60 s.
    std::chrono::milliseconds every{0};
    /// A line for the operator (stderr); may be empty.
    std::function<void(const std::string&)> say;
    /// Set when the lock is lost: the run stops as interrupted. May be null.
    std::atomic<bool>* stop = nullptr;
  };

  /// `mine` was taken at `taken` (the ttl counts from there).
  LockKeeper(Journal& journal, LockInfo mine, std::chrono::seconds ttl, Steady::time_point taken,
             Options options);
  /// Stops renewing and releases the lock (if this process still holds it).
  ~LockKeeper();
  LockKeeper(const LockKeeper&) = delete;
  LockKeeper& operator=(const LockKeeper&) = delete;

  /// The lock is lost, cannot be renewed, or is past 4/5 of its ttl since the last renewal (a
  /// clock read, so a process stopped and continued sees it at once, before any renewal).
  bool Expiring() const;

  /// What the operator is told when the lock is lost (`why`: the journal's message) and the
  /// run stops: exact about what happens to the nodes in progress.
  static std::string LostMessage(const std::string& why, const std::string& run);

 private:
  void Renew();
  Steady::duration SinceRenewed() const;
  void Say(const std::string& line) const;

  Journal& j_;
  const LockInfo mine_;
  const std::chrono::seconds ttl_;
  Options opt_;
  std::atomic<Steady::rep> last_ok_;   ///< the last renewal (or the take), read by the engine
  std::atomic<bool> given_up_{false};  ///< lost, or not renewable: stop for good
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread t_;
};

}  // namespace plumb::plans
