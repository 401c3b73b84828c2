#pragma once
/// Clock: wall time and sleeping, behind an interface so rollout tests run without waiting
/// (tests/fakes/fake_clock.h advances time on Sleep).
#include <chrono>
#include <optional>
#include <string>

namespace plumb::plans {

class Clock {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint Now() = 0;
  /// Sleeps for `d` (real clocks may return early; callers re-check their condition).
  virtual void Sleep(std::chrono::milliseconds d) = 0;
};

/// The system clock.
class RealClock final : public Clock {
 public:
  TimePoint Now() override;
  void Sleep(std::chrono::milliseconds d) override;
};

/// "2026-11-29T23:26:08.123Z" (UTC, milliseconds): the journal's and the events' time format.
/// Lexicographic order of these strings is time order.
std::string Rfc3339(Clock::TimePoint t);

/// Parses what Rfc3339 writes (and "...Z" without milliseconds); nullopt otherwise.
std::optional<Clock::TimePoint> ParseRfc3339(const std::string& s);

/// Milliseconds between two time points (b - a).
inline long long MillisBetween(Clock::TimePoint a, Clock::TimePoint b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

}  // namespace plumb::plans
