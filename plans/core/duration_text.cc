#include "plans/core/duration_text.h"

#include <fmt/format.h>

namespace plumb::plans {

std::string FormatDuration(long long s, DurationStyle style) {
  const bool estimate = style == DurationStyle::kEstimate;
  const long long round = estimate ? 59 : 0;   // what rounds a remainder of seconds up
  if (!estimate && s < 0) s = -s;
  if (!estimate && s >= 86400) return fmt::format("{}d {}h", s / 86400, s % 86400 / 3600);
  if (s >= 3600) {
    long long h = s / 3600, m = (s % 3600 + round) / 60;
    if (m == 60) ++h, m = 0;
    return fmt::format("{}h {:02}m", h, m);
  }
  if (s >= 60) return fmt::format("{}m", (s + round) / 60);
  return fmt::format("{}s", s);
}

}  // namespace plumb::plans
