#include "plans/rollout/window.h"

#include <ctime>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace plumb::plans {
namespace {

using std::chrono::minutes;
using std::chrono::system_clock;

bool ParseInt(const std::string& s, int& out) {
  if (s.empty() || s.size() > 4) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  out = std::stoi(s);
  return true;
}

// One field into `bits` (positions lo..hi). Returns false on any malformed piece.
template <size_t N>
bool ParseField(const std::string& field, int lo, int hi, std::bitset<N>& bits, bool& star) {
  star = field == "*";
  std::stringstream ss(field);
  std::string part;
  bool any = false;
  while (std::getline(ss, part, ',')) {
    any = true;
    int step = 1;
    if (auto slash = part.find('/'); slash != std::string::npos) {
      if (!ParseInt(part.substr(slash + 1), step) || step < 1) return false;
      part = part.substr(0, slash);
    }
    int a, b;
    if (part == "*") {
      a = lo;
      b = hi;
    } else if (auto dash = part.find('-'); dash != std::string::npos) {
      if (!ParseInt(part.substr(0, dash), a) || !ParseInt(part.substr(dash + 1), b)) return false;
    } else {
      if (!ParseInt(part, a)) return false;
      b = a;
    }
    if (a < lo || b > hi || a > b) return false;
    for (int v = a; v <= b; v += step) bits.set(static_cast<size_t>(v));
  }
  return any;
}

std::tm Utc(system_clock::time_point t) {
  std::time_t s = system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  return tm;
}

system_clock::time_point FloorMinute(system_clock::time_point t) {
  return std::chrono::time_point_cast<minutes>(t);
}

}  // namespace

Result<CronSpec> CronSpec::Parse(const std::string& expr) {
  std::stringstream ss(expr);
  std::vector<std::string> f;
  for (std::string w; ss >> w;) f.push_back(w);
  if (f.size() != 5)
    return Diagnostic::Error("window.cron",
                             fmt::format("cron '{}' has {} fields, want 5 (minute hour "
                                         "day-of-month month day-of-week)", expr, f.size()));
  CronSpec c;
  bool star;
  static const char* kNames[] = {"minute", "hour", "day-of-month", "month", "day-of-week"};
  std::bitset<8> dow8;
  bool ok[5] = {ParseField(f[0], 0, 59, c.minute_, star), ParseField(f[1], 0, 23, c.hour_, star),
                ParseField(f[2], 1, 31, c.dom_, c.dom_star_),
                ParseField(f[3], 1, 12, c.month_, star),
                ParseField(f[4], 0, 7, dow8, c.dow_star_)};
  for (int i = 0; i < 5; ++i)
    if (!ok[i])
      return Diagnostic::Error("window.cron",
                               fmt::format("cron '{}': bad {} field '{}'", expr, kNames[i], f[i]),
                               {}, "window.cron", "use *, N, A-B, */N, A-B/N or a comma list");
  for (int d = 0; d < 7; ++d) c.dow_[d] = dow8[d];
  if (dow8[7]) c.dow_[0] = true;   // 7 is Sunday too
  return c;
}

bool CronSpec::Matches(system_clock::time_point t) const {
  std::tm tm = Utc(t);
  if (!minute_[tm.tm_min] || !hour_[tm.tm_hour] || !month_[tm.tm_mon + 1]) return false;
  bool dom = dom_[tm.tm_mday], dow = dow_[tm.tm_wday];
  if (dom_star_ || dow_star_) return dom && dow;
  return dom || dow;
}

Result<Window> Window::Make(const std::string& cron, int duration_s) {
  Window w;
  if (cron.empty()) return w;
  auto spec = CronSpec::Parse(cron);
  if (!spec) return spec.error();
  if (duration_s <= 0)
    return Diagnostic::Error("window.duration", "a maintenance window needs a positive duration");
  w.cron_ = *spec;
  w.duration_ = std::chrono::seconds(duration_s);
  return w;
}

bool Window::IsOpen(system_clock::time_point t) const {
  if (!cron_) return true;
  // Any opening minute within the last `duration` (inclusive of this minute) puts t inside.
  auto m = FloorMinute(t);
  auto earliest = t - duration_;
  for (auto s = m; s > earliest; s -= minutes(1))
    if (cron_->Matches(s)) return true;
  return false;
}

std::optional<system_clock::time_point> Window::NextOpen(system_clock::time_point t) const {
  if (IsOpen(t)) return t;
  auto s = FloorMinute(t) + minutes(1);
  for (int i = 0; i < 366 * 24 * 60; ++i, s += minutes(1))
    if (cron_->Matches(s)) return s;
  return std::nullopt;
}

system_clock::time_point Window::ClosesAt(system_clock::time_point t) const {
  if (!cron_) return system_clock::time_point::max();
  auto m = FloorMinute(t);
  auto earliest = t - duration_;
  system_clock::time_point close = t;
  for (auto s = m; s > earliest; s -= minutes(1))
    if (cron_->Matches(s)) close = std::max(close, s + duration_);
  return close;
}

}  // namespace plumb::plans
