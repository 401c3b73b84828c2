#include "modules/transport/wait_progress.h"

namespace plumb::transport {

std::string DurationText(std::chrono::milliseconds d) {
  long long s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s < 0) s = 0;
  const long long h = s / 3600, m = s % 3600 / 60, sec = s % 60;
  std::string out;
  if (h) out += std::to_string(h) + "h";
  if (m) out += std::to_string(m) + "m";
  if (sec || out.empty()) out += std::to_string(sec) + "s";
  return out;
}

std::string WaitProgress::Text() const {
  std::string s = what + ": " + (state.empty() ? "no answer yet" : state);
  if (percent >= 0) s += " " + std::to_string(percent) + "%";
  s += " (" + DurationText(waited);
  if (limit.count() > 0) s += " of " + DurationText(limit);
  return s + ")";
}

}  // namespace plumb::transport
