#include "plans/watch/schedule.h"

#include <algorithm>

namespace plumb::plans::watch {

std::chrono::milliseconds SlotOffset(size_t index, size_t count, std::chrono::milliseconds interval,
                                     double spread) {
  if (count == 0) return std::chrono::milliseconds(0);
  spread = std::clamp(spread, 0.0, 1.0);
  const double span = static_cast<double>(interval.count()) * spread;
  return std::chrono::milliseconds(
      static_cast<long long>(span * static_cast<double>(index) / static_cast<double>(count)));
}

std::chrono::milliseconds RetryDelay(int failures, std::chrono::milliseconds base,
                                     std::chrono::milliseconds cap, double random01) {
  long long d = base.count();
  for (int i = 1; i < failures && d < cap.count(); ++i) d *= 2;
  d = std::min(d, static_cast<long long>(cap.count()));
  random01 = std::clamp(random01, 0.0, 1.0);
  return std::chrono::milliseconds(d / 2 + static_cast<long long>(static_cast<double>(d / 2) * random01));
}

}  // namespace plumb::plans::watch
