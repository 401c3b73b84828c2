#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <mutex>

#include "plans/report/ordered_render.h"

using plumb::plans::report::WriteOrdered;

TEST_CASE("WriteOrdered: every piece once, in order, whatever thread rendered it") {
  for (size_t count : {size_t{0}, size_t{1}, size_t{127}, size_t{128}, size_t{129}, size_t{5000}}) {
    CAPTURE(count);
    std::ostringstream out;
    std::atomic<size_t> calls{0};
    std::mutex mu;
    std::set<std::thread::id> threads;
    WriteOrdered(
        count,
        [&](size_t i, std::string& piece) {
          CHECK(piece.empty());
          piece = std::to_string(i) + "\n";
          ++calls;
          std::lock_guard lock(mu);
          threads.insert(std::this_thread::get_id());
        },
        out);
    std::string want;
    for (size_t i = 0; i < count; ++i) want += std::to_string(i) + "\n";
    CHECK(out.str() == want);
    CHECK(calls.load() == count);
    // Past one chunk, on a machine with more than one core, pieces are rendered by the
    // renderer threads while the caller writes (how many of them took work is the scheduler's
    // business on a loaded machine).
    if (count > 128 && std::thread::hardware_concurrency() > 1) {
      CHECK(threads.count(std::this_thread::get_id()) == 0);
      CHECK(!threads.empty());
    }
  }
}
