// Maintenance windows: the cron subset and open/next/close arithmetic (UTC).
#include <doctest/doctest.h>

#include "plans/core/clock.h"
#include "plans/rollout/window.h"

using namespace plumb;

namespace {
plans::Clock::TimePoint T(const char* s) { return *plans::ParseRfc3339(s); }
}  // namespace

TEST_CASE("window: cron fields, ranges, steps and lists") {
  // 2027-01-01 is a Friday (dow 5).
  auto c = plans::CronSpec::Parse("*/15 22-23 * * 1-5");
  REQUIRE(c.ok());
  CHECK(c->Matches(T("2027-01-01T22:00:00Z")));
  CHECK(c->Matches(T("2027-01-01T23:45:30Z")));
  CHECK_FALSE(c->Matches(T("2027-01-01T22:05:00Z")));
  CHECK_FALSE(c->Matches(T("2027-01-02T22:00:00Z")));   // Saturday
  auto sun = plans::CronSpec::Parse("0 0 * * 7");
  REQUIRE(sun.ok());
  CHECK(sun->Matches(T("2027-01-03T00:00:00Z")));       // Sunday as 7
  // Both day fields restricted: either matches (cron's rule).
  auto either = plans::CronSpec::Parse("0 3 15 * 1");
  REQUIRE(either.ok());
  CHECK(either->Matches(T("2027-01-15T03:00:00Z")));    // the 15th, a Friday
  CHECK(either->Matches(T("2027-01-04T03:00:00Z")));    // a Monday
  CHECK_FALSE(either->Matches(T("2027-01-05T03:00:00Z")));
  auto list = plans::CronSpec::Parse("0,30 1,13 1-10/3 1,7 *");
  REQUIRE(list.ok());
  CHECK(list->Matches(T("2027-01-04T13:30:00Z")));
  CHECK_FALSE(list->Matches(T("2027-01-05T13:30:00Z")));
}

TEST_CASE("window: bad cron is a clear error") {
  for (const char* bad : {"", "* * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "5-1 * * * *",
                          "*/0 * * * *", "a * * * *", "1,,2 * * * *"}) {
    CAPTURE(bad);
    auto c = plans::CronSpec::Parse(bad);
    CHECK_FALSE(c.ok());
  }
  CHECK(plans::CronSpec::Parse("60 * * * *").error().message.find("minute") != std::string::npos);
}

TEST_CASE("window: open, next opening, and closing time") {
  auto w = plans::Window::Make("0 22 * * 1-5", 6 * 3600);
  REQUIRE(w.ok());
  CHECK(w->IsOpen(T("2027-01-01T22:00:00Z")));
  CHECK(w->IsOpen(T("2027-01-02T03:59:59Z")));          // Friday's window runs into Saturday
  CHECK_FALSE(w->IsOpen(T("2027-01-02T04:00:00Z")));
  CHECK_FALSE(w->IsOpen(T("2027-01-02T22:30:00Z")));    // no window opens on Saturday
  CHECK(*w->NextOpen(T("2027-01-02T12:00:00Z")) == T("2027-01-04T22:00:00Z"));
  CHECK(*w->NextOpen(T("2027-01-01T23:00:00Z")) == T("2027-01-01T23:00:00Z"));
  CHECK(w->ClosesAt(T("2027-01-01T23:00:00Z")) == T("2027-01-02T04:00:00Z"));
  CHECK(plans::Window().IsOpen(T("2027-01-02T12:00:00Z")));
  CHECK_FALSE(plans::Window::Make("0 22 * * *", 0).ok());
}
