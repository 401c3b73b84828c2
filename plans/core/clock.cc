#include "plans/core/clock.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>

#include <fmt/format.h>

namespace plumb::plans {

Clock::TimePoint RealClock::Now() { return std::chrono::system_clock::now(); }

void RealClock::Sleep(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

std::string Rfc3339(Clock::TimePoint t) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     static_cast<int>(ms % 1000));
}

std::optional<Clock::TimePoint> ParseRfc3339(const std::string& s) {
  std::tm tm{};
  int ms = 0;
  int n = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
    return std::nullopt;
  std::string rest = s.substr(static_cast<size_t>(n));
  if (rest.size() == 5 && rest[0] == '.' && rest[4] == 'Z') ms = std::atoi(rest.substr(1, 3).c_str());
  else if (rest != "Z") return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::time_t secs = timegm(&tm);
  return std::chrono::system_clock::from_time_t(secs) + std::chrono::milliseconds(ms);
}

}  // namespace plumb::plans
