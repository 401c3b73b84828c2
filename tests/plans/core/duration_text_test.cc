// Durations as the plan's estimates, the engine's drain progress and the reports' facts ages
// write them.
#include <doctest/doctest.h>

#include "plans/core/duration_text.h"

using namespace plumb;

TEST_CASE("durations: seconds, minutes rounded up, hours with zero-padded minutes") {
  CHECK(plans::FormatDuration(45) == "45s");
  CHECK(plans::FormatDuration(600) == "10m");
  CHECK(plans::FormatDuration(3600 + 5 * 60) == "1h 05m");
  CHECK(plans::FormatDuration(2 * 3600 - 1) == "2h 00m");
}

TEST_CASE("durations: an age rounds down, drops its sign and counts days") {
  using plans::DurationStyle;
  CHECK(plans::FormatDuration(45, DurationStyle::kAge) == "45s");
  CHECK(plans::FormatDuration(-45, DurationStyle::kAge) == "45s");
  CHECK(plans::FormatDuration(119, DurationStyle::kAge) == "1m");                // estimate: 2m
  CHECK(plans::FormatDuration(2 * 3600 - 1, DurationStyle::kAge) == "1h 59m");   // estimate: 2h 00m
  CHECK(plans::FormatDuration(31 * 86400 + 2 * 3600 + 59, DurationStyle::kAge) == "31d 2h");
  CHECK(plans::FormatDuration(30 * 3600) == "30h 00m");                          // an estimate: hours
  CHECK(plans::FormatDuration(119) == "2m");
}
