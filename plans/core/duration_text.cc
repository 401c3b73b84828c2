#include "plans/core/duration_text.h"

#include <fmt/format.h>

namespace plumb::plans {

std::string FormatDuration(int s) {
  if (s >= 3600) {
    int h = s / 3600, m = (s % 3600 + 59) / 60;
    if (m == 60) ++h, m = 0;
    return fmt::format("{}h {:02}m", h, m);
  }
  if (s >= 60) return fmt::format("{}m", (s + 59) / 60);
  return fmt::format("{}s", s);
}

}  // namespace plumb::plans
