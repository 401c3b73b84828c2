// The engine's one way of waiting, on a fake clock: no test waits for real.
#include <doctest/doctest.h>

#include "fakes/fake_clock.h"
#include "plans/core/poll.h"

using namespace plumb;
using std::chrono::milliseconds;

TEST_CASE("backoff doubles up to its cap, and starts over after a reset") {
  plans::Backoff b(milliseconds(250), milliseconds(1000));
  CHECK(b.Next() == milliseconds(250));
  CHECK(b.Next() == milliseconds(500));
  CHECK(b.Next() == milliseconds(1000));
  CHECK(b.Next() == milliseconds(1000));
  b.Reset();
  CHECK(b.Next() == milliseconds(250));
  // A cap below the first wait is the first wait.
  plans::Backoff tight(milliseconds(500), milliseconds(100));
  CHECK(tight.Next() == milliseconds(500));
  CHECK(tight.Next() == milliseconds(500));
}

TEST_CASE("poll: ready, timed out and stopped, with the sleeps in between") {
  fakes::FakeClock clock;
  const auto start = clock.Now();
  int looks = 0, waits = 0;
  SUBCASE("ready on the third look: two sleeps, 250 + 500 ms") {
    auto end = plans::Poll(
        clock, start, std::chrono::seconds(60), {milliseconds(250), milliseconds(5000)},
        [&] { return ++looks == 3; }, [] { return false; }, [&](auto) { ++waits; });
    CHECK(end == plans::PollEnd::kReady);
    CHECK(waits == 2);
    CHECK(clock.Now() - start == milliseconds(750));
  }
  SUBCASE("never ready: gives up once the limit has passed, having looked after the last sleep") {
    auto end = plans::Poll(
        clock, start, std::chrono::seconds(2), {milliseconds(500), milliseconds(500)},
        [&] { return ++looks, false; }, [] { return false; }, [](auto) {});
    CHECK(end == plans::PollEnd::kTimedOut);
    CHECK(looks == 5);   // at 0, 0.5, 1, 1.5 and 2 s
    CHECK(clock.Now() - start == std::chrono::seconds(2));
  }
  SUBCASE("a stop ends the wait before the deadline is even looked at") {
    auto end = plans::Poll(
        clock, start, std::chrono::seconds(0), {milliseconds(250), milliseconds(250)},
        [&] { return false; }, [] { return true; }, [&](auto) { ++waits; });
    CHECK(end == plans::PollEnd::kStopped);
    CHECK(waits == 0);
  }
}
