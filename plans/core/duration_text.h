#pragma once
/// A span of seconds as plumb writes it everywhere: the plan's estimates, a drain's "12m of
/// 1h 00m", and how old a report's facts are ("facts gathered ..., 3d 4h before").
#include <string>

namespace plumb::plans {

/// How a span is cut to the units it is written in. An estimate rounds up (a 61 s step takes
/// "2m") and counts hours however many; an age rounds down, drops its sign and counts days
/// past 24 hours (a week-old fact set is "7d 0h", not "168h 00m").
enum class DurationStyle { kEstimate, kAge };

/// "1h 05m", "12m", "45s"; as an age also "3d 4h".
std::string FormatDuration(long long seconds, DurationStyle style = DurationStyle::kEstimate);

}  // namespace plumb::plans
