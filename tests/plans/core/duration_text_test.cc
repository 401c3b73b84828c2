// Durations as the plan's estimates and the engine's drain progress write them.
#include <doctest/doctest.h>

#include "plans/core/duration_text.h"

using namespace plumb;

TEST_CASE("durations: seconds, minutes rounded up, hours with zero-padded minutes") {
  CHECK(plans::FormatDuration(45) == "45s");
  CHECK(plans::FormatDuration(600) == "10m");
  CHECK(plans::FormatDuration(3600 + 5 * 60) == "1h 05m");
  CHECK(plans::FormatDuration(2 * 3600 - 1) == "2h 00m");
}
