// Slots and retry delays of the watch.
#include <doctest/doctest.h>

#include "plans/watch/schedule.h"

using namespace std::chrono_literals;
using plumb::plans::watch::RetryDelay;
using plumb::plans::watch::SlotOffset;

TEST_CASE("watch slots: node starts evenly over the spread part of the interval") {
  CHECK(SlotOffset(0, 4, 60s, 1.0) == 0ms);
  CHECK(SlotOffset(1, 4, 60s, 1.0) == 15s);
  CHECK(SlotOffset(3, 4, 60s, 1.0) == 45s);
  CHECK(SlotOffset(3, 4, 60s, 0.5) == 22500ms);
  CHECK(SlotOffset(3, 4, 60s, 0.0) == 0ms);
  CHECK(SlotOffset(999, 1000, 60s, 1.0) < 60s);   // never into the next round
  CHECK(SlotOffset(0, 0, 60s, 1.0) == 0ms);
}

TEST_CASE("watch retries: exponential, capped, half of it jitter") {
  CHECK(RetryDelay(1, 1s, 60s, 0.0) == 500ms);
  CHECK(RetryDelay(1, 1s, 60s, 1.0) == 1s);
  CHECK(RetryDelay(2, 1s, 60s, 0.0) == 1s);
  CHECK(RetryDelay(4, 1s, 60s, 0.0) == 4s);
  CHECK(RetryDelay(4, 1s, 60s, 0.5) == 6s);
  CHECK(RetryDelay(7, 1s, 60s, 1.0) == 60s);     // 64 s capped
  CHECK(RetryDelay(40, 1s, 60s, 0.0) == 30s);    // no overflow, still capped
}
