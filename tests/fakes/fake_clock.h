#pragma once
/// FakeClock: time moves only when someone sleeps (by the amount slept), so rollout tests with
/// hour-long timeouts finish in milliseconds. Thread-safe; Sleep yields briefly for real so
/// other node threads make progress.
#include <atomic>
#include <thread>

#include "plans/core/clock.h"

namespace plumb::fakes {

class FakeClock final : public plans::Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::seconds(1798761600)))  // 2027-01-01
      : ms_(std::chrono::duration_cast<std::chrono::milliseconds>(start.time_since_epoch()).count()) {}
  TimePoint Now() override { return TimePoint(std::chrono::milliseconds(ms_.load())); }
  void Sleep(std::chrono::milliseconds d) override {
    ms_ += d.count();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  void Advance(std::chrono::milliseconds d) { ms_ += d.count(); }
  void Set(TimePoint t) {
    ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  }

 private:
  std::atomic<long long> ms_;
};

}  // namespace plumb::fakes
