#pragma once
/// A span of seconds as the plan and the engine write it: the plan's estimates and a drain's
/// "12m of 1h 00m" read the same way.
#include <string>

namespace plumb::plans {

/// "1h 05m", "12m", "45s" (minutes rounded up).
std::string FormatDuration(int seconds);

}  // namespace plumb::plans
