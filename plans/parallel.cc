#include "plans/parallel.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>
#include <vector>

namespace plumb::plans {

size_t Cores() { return std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8); }

size_t RangeCount(size_t count, size_t min_parallel) {
  if (count == 0) return 0;
  return count < min_parallel ? 1 : std::min(Cores(), count);
}

void ForEachRange(size_t count, size_t min_parallel,
                  const std::function<void(size_t begin, size_t end, size_t chunk)>& work) {
  const size_t ranges = RangeCount(count, min_parallel);
  if (ranges == 0) return;
  const size_t per = (count + ranges - 1) / ranges;
  std::vector<std::future<void>> others;
  for (size_t c = 1; c < ranges; ++c) {
    const size_t begin = std::min(count, c * per), end = std::min(count, begin + per);
    others.push_back(std::async(std::launch::async, [&work, begin, end, c] { work(begin, end, c); }));
  }
  work(0, std::min(count, per), 0);
  for (auto& f : others) f.get();   // rethrows a worker's exception here
}

void ForEachBounded(size_t count, int fanout, const std::function<void(size_t i)>& work) {
  if (count == 0) return;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) work(i);
  };
  const size_t threads = std::clamp<size_t>(fanout < 1 ? 1 : static_cast<size_t>(fanout), 1, count);
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();   // the calling thread is one of the workers
  for (auto& t : pool) t.join();
}

}  // namespace plumb::plans
