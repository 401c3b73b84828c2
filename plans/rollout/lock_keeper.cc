#include "plans/rollout/lock_keeper.h"

#include <algorithm>

#include <fmt/format.h>

#include "plans/core/clock.h"

namespace plumb::plans {

// What stops and what does not, as the engine does it: no node is admitted once stopping; a
// node thread checks before each step (NodeRun::ContinueTo) and in every wait it polls.
constexpr const char* kWhatStops =
    "no new node starts, and each node in progress stops before its next step (a command "
    "already running on it completes first; a wait for its jobs or its reboot is abandoned) and "
    "is left as it stands, drained if it was; node leases are no longer renewed";

std::string LockKeeper::LostMessage(const std::string& why, const std::string& run) {
  return fmt::format("lost the cluster lock ({}); stopping: {}. Whoever holds the lock now "
                     "carries the run on (plumb apply --resume {} once it is free)",
                     why, kWhatStops, run);
}

LockKeeper::LockKeeper(Journal& journal, LockInfo mine, std::chrono::seconds ttl, Steady::time_point taken,
                       Options options)
    : j_(journal), mine_(std::move(mine)), ttl_(ttl), opt_(std::move(options)),
      last_ok_(taken.time_since_epoch().count()) {
  const auto every = opt_.every.count() > 0
                         ? opt_.every
                         : std::clamp<std::chrono::milliseconds>(
                               std::chrono::duration_cast<std::chrono::milliseconds>(ttl_) / 5,
                               std::chrono::seconds(1), std::chrono::seconds(60));
  t_ = std::thread([this, every] {
    std::unique_lock lk(mu_);
    while (!cv_.wait_for(lk, every, [this] { return done_; })) {
      lk.unlock();
      Renew();
      lk.lock();
    }
  });
}

LockKeeper::~LockKeeper() {
  {
    std::lock_guard lk(mu_);
    done_ = true;
  }
  cv_.notify_all();
  t_.join();
  (void)j_.ReleaseLock(mine_);
}

bool LockKeeper::Expiring() const { return given_up_.load() || SinceRenewed() >= ttl_ * 4 / 5; }

LockKeeper::Steady::duration LockKeeper::SinceRenewed() const {
  return Steady::now() - Steady::time_point(Steady::duration(last_ok_.load(std::memory_order_relaxed)));
}

void LockKeeper::Say(const std::string& line) const {
  if (opt_.say) opt_.say(line);
}

void LockKeeper::Renew() {
  if (given_up_) return;   // once stopped, the lock is left to expire (or be released at the end)
  const auto asked = Steady::now();   // the new expiry counts from here, whatever the wait
  // The store's clock when it answers (a shared store's server), else this machine's.
  auto store_now = j_.StoreNow();
  const auto now = store_now.ok() ? *store_now : std::chrono::system_clock::now();
  Status s = j_.RenewLock(mine_, Rfc3339(now + ttl_));
  if (s) {
    last_ok_.store(asked.time_since_epoch().count(), std::memory_order_relaxed);
    return;
  }
  const long long since_s = std::chrono::duration_cast<std::chrono::seconds>(SinceRenewed()).count();
  if (s.error().code == "journal.lock-lost") {
    // Another process holds the cluster (or this run) now.
    // Said first: whoever sees the run stop (Expiring, the stop flag) finds the reason written.
    Say(LostMessage(s.error().message, mine_.run));
    given_up_ = true;
    if (opt_.stop) opt_.stop->store(true);
    return;
  }
  if (s.error().code == "journal.unreachable") {
    // The store has not answered for its whole retry window: this process cannot hold the
    // lock, and another runner may take the run over once it expires. Stop now, not at 4/5 of
    // the ttl: nothing this run does can be recorded meanwhile anyway.
    Say(fmt::format("cannot renew the cluster lock: {}; stopping (the lock was last renewed {}s "
                    "ago and expires {}s after that, when another runner may take the run over): {}",
                    s.error().message, since_s, ttl_.count(), kWhatStops));
    given_up_ = true;
    return;
  }
  // Another error (the store answered): try again next time, unless most of the ttl is gone.
  Say("cannot renew the cluster lock: " + s.error().message);
  if (Expiring()) {
    Say(fmt::format("the cluster lock was last renewed {}s ago (--lock-ttl {}s); stopping before "
                    "another runner may take it: {}",
                    since_s, ttl_.count(), kWhatStops));
    given_up_ = true;
  }
}

}  // namespace plumb::plans
