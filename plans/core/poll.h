#pragma once
/// Waiting for a condition, the one way the engine does it: look, and if not yet, sleep on the
/// engine's Clock with a doubling backoff up to a cap, until a deadline or a stop. Every wait of
/// the rollout (the scheduler answering, jobs draining, a new boot id, the scheduler seeing a
/// node back) goes through Poll, so a test's fake clock drives them all and no wait races the
/// machine's real speed.
#include <algorithm>
#include <chrono>

#include "plans/core/clock.h"

namespace plumb::plans {

/// A doubling wait: initial, 2x, 4x ... never above `cap`.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds cap)
      : initial_(initial), cap_(std::max(cap, initial)), next_(initial) {}
  /// The wait to sleep now; the one after doubles.
  std::chrono::milliseconds Next() {
    auto now = next_;
    next_ = std::min(next_ * 2, cap_);
    return now;
  }
  void Reset() { next_ = initial_; }

 private:
  std::chrono::milliseconds initial_, cap_, next_;
};

enum class PollEnd {
  kReady,      ///< `look` said the condition holds
  kTimedOut,   ///< `limit` passed since `start`
  kStopped,    ///< `stop` said so (Ctrl-C, a run that is pausing)
};

/// Calls look() until it returns true. Between looks: stop() ends the wait (checked before the
/// deadline, so a Ctrl-C is never reported as a timeout), then the deadline (`limit` after
/// `start`), then waiting(elapsed) (a heartbeat; it may throw to abandon the wait), then a
/// sleep of backoff.Next().
template <typename Look, typename Stop, typename Waiting>
PollEnd Poll(Clock& clock, Clock::TimePoint start, Clock::TimePoint::duration limit, Backoff backoff,
             Look&& look, Stop&& stop, Waiting&& waiting) {
  for (;;) {
    if (look()) return PollEnd::kReady;
    if (stop()) return PollEnd::kStopped;
    const auto elapsed = clock.Now() - start;
    if (elapsed >= limit) return PollEnd::kTimedOut;
    waiting(elapsed);
    clock.Sleep(backoff.Next());
  }
}

}  // namespace plumb::plans
