#include "plans/report/ordered_render.h"

#include "plans/core/parallel.h"

#include <algorithm>
#include <deque>
#include <future>
#include <thread>

namespace plumb::plans::report {

void WriteOrdered(size_t count, const std::function<void(size_t i, std::string& piece)>& render,
                  std::ostream& out) {
  constexpr size_t kPerChunk = 128;
  const size_t threads = Cores();
  auto chunk = [&render, count](size_t first) {
    std::string text, piece;
    for (size_t i = first; i < std::min(count, first + kPerChunk); ++i) {
      piece.clear();
      render(i, piece);
      text += piece;
    }
    return text;
  };
  if (threads == 1 || count <= kPerChunk) {
    for (size_t first = 0; first < count; first += kPerChunk) out << chunk(first);
    return;
  }
  // Declared before the futures, so gone after them: a job still queued when its future is
  // dropped runs while what it refers to still lives.
  JobThreads renderers(threads);
  std::deque<std::future<std::string>> in_flight;
  for (size_t first = 0; first < count; first += kPerChunk) {
    in_flight.push_back(renderers.Submit([&chunk, first] { return chunk(first); }));
    while (in_flight.size() > 2 * threads) {
      out << in_flight.front().get();
      in_flight.pop_front();
    }
  }
  for (auto& f : in_flight) out << f.get();
}

}  // namespace plumb::plans::report
