// ThreadPool: at most `workers` tasks at once, and Drain waits for every one.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "plans/watch/task_pool.h"

using namespace std::chrono_literals;

TEST_CASE("thread pool: runs every task, `workers` of them at once and never more") {
  std::atomic<int> active{0}, peak{0}, done{0};
  std::atomic<bool> release{false};
  plumb::plans::watch::ThreadPool pool(3);
  for (int i = 0; i < 10; ++i) {
    pool.Submit([&] {
      int now = ++active;
      int p = peak.load();
      while (now > p && !peak.compare_exchange_weak(p, now)) {}
      while (!release) std::this_thread::sleep_for(1ms);
      --active;
      ++done;
    });
  }
  // Three start and hold; the other seven wait their turn.
  for (int i = 0; i < 30000 && active < 3; ++i) std::this_thread::sleep_for(1ms);
  CHECK(active == 3);
  pool.WaitForAny(20ms);   // nothing has finished: it only waits
  CHECK(done == 0);
  release = true;
  pool.Drain();
  CHECK(done == 10);
  CHECK(peak == 3);
}
