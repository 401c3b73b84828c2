#pragma once
/// Maintenance windows: a cron expression (when a window opens) and a duration. The subset of
/// cron: five fields "minute hour day-of-month month day-of-week", each `*`, a number, a range
/// `a-b`, a step `*/n` or `a-b/n`, or a comma list of those; day-of-week 0-7 (0 and 7 = Sunday).
/// As in cron, when both day fields are restricted a day matches if EITHER matches.
/// Times are UTC.
#include <bitset>
#include <chrono>
#include <optional>
#include <string>

#include "schemas/result.h"

namespace plumb::plans {

class CronSpec {
 public:
  /// Parses "0 22 * * 1-5". Error code "window.cron" naming the bad field.
  static Result<CronSpec> Parse(const std::string& expr);
  /// Does a window open at this minute (seconds ignored)?
  bool Matches(std::chrono::system_clock::time_point t) const;

 private:
  std::bitset<60> minute_;
  std::bitset<24> hour_;
  std::bitset<32> dom_;
  std::bitset<13> month_;
  std::bitset<7> dow_;
  bool dom_star_ = true, dow_star_ = true;
};

class Window {
 public:
  /// An always-open window (no cron in the policy).
  Window() = default;
  static Result<Window> Make(const std::string& cron, int duration_s);

  bool always() const { return !cron_.has_value(); }
  /// Is `t` inside a window: some opening s with s <= t < s + duration?
  bool IsOpen(std::chrono::system_clock::time_point t) const;
  /// The next opening at or after `t` (t itself when open); nullopt if none within a year.
  std::optional<std::chrono::system_clock::time_point> NextOpen(
      std::chrono::system_clock::time_point t) const;
  /// When the window containing `t` closes (t if closed).
  std::chrono::system_clock::time_point ClosesAt(std::chrono::system_clock::time_point t) const;

 private:
  std::optional<CronSpec> cron_;
  std::chrono::seconds duration_{0};
};

}  // namespace plumb::plans
