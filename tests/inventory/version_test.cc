#include <doctest/doctest.h>

#include "inventory/version.h"

using namespace plumb::inventory;

TEST_CASE("dotted versions compare numerically") {
  auto v = [](const char* s) { return *ParseDotted(s); };
  CHECK(CompareDotted(v("550.90.07"), v("550.54.14")) > 0);
  CHECK(CompareDotted(v("535.104.05"), v("535.54.03")) > 0);  // not a string compare
  CHECK(CompareDotted(v("570.26"), v("570.26.0")) == 0);
  CHECK(CompareDotted(v("560.28.03"), v("560.35.03")) < 0);
  CHECK_FALSE(ParseDotted("12.4-1"));
  CHECK_FALSE(ParseDotted("12..4"));
  CHECK_FALSE(ParseDotted(""));
  CHECK_FALSE(ParseDotted("1.2.3."));
  CHECK(DottedPrefix(v("12.4"), v("12.4.1")));
  CHECK(DottedPrefix(v("12.4"), v("12.4")));
  CHECK_FALSE(DottedPrefix(v("12.4.1"), v("12.4")));
  CHECK_FALSE(DottedPrefix(v("12.4"), v("12.40.1")));
}

TEST_CASE("durations") {
  CHECK(ParseDuration("90s") == 90);
  CHECK(ParseDuration("10m") == 600);
  CHECK(ParseDuration("4h") == 14400);
  CHECK(ParseDuration("1h30m") == 5400);
  CHECK(ParseDuration("1d") == 86400);
  CHECK_FALSE(ParseDuration("10"));
  CHECK_FALSE(ParseDuration("h"));
  CHECK_FALSE(ParseDuration("10x"));
  CHECK_FALSE(ParseDuration("9999999d"));
}
