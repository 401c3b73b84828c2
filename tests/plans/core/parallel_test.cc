#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "plans/core/digest.h"
#include "plans/core/parallel.h"

using namespace plumb;

TEST_CASE("ForEachRange: every item in exactly one range; ranges indexed below RangeCount") {
  for (size_t count : {size_t{0}, size_t{1}, size_t{5}, size_t{1000}, size_t{10001}}) {
    CAPTURE(count);
    std::vector<std::atomic<int>> seen(count);
    const size_t ranges = plans::RangeCount(count, 100);
    std::vector<std::atomic<int>> chunk_used(std::max<size_t>(ranges, 1));
    plans::ForEachRange(count, 100, [&](size_t begin, size_t end, size_t chunk) {
      REQUIRE(chunk < ranges);
      ++chunk_used[chunk];
      for (size_t i = begin; i < end; ++i) ++seen[i];
    });
    for (size_t i = 0; i < count; ++i) CHECK(seen[i].load() == 1);
    if (count < 100) CHECK(ranges == (count ? 1u : 0u));
    for (size_t c = 0; c < ranges; ++c) CHECK(chunk_used[c].load() == 1);
  }
}

TEST_CASE("ForEachRange: a worker's exception reaches the caller after every range ended") {
  std::atomic<int> finished{0};
  CHECK_THROWS_AS(plans::ForEachRange(4000, 1,
                                      [&](size_t begin, size_t, size_t chunk) {
                                        if (chunk == plans::RangeCount(4000, 1) - 1 && begin > 0)
                                          throw std::runtime_error("boom");
                                        ++finished;
                                      }),
                  std::runtime_error);
  if (plans::RangeCount(4000, 1) > 1) CHECK(finished.load() >= 1);
}

TEST_CASE("Sha256 fed in pieces equals the one-shot digest") {
  const std::string text = "{\"a\":1,\"nodes\":[{\"n\":\"x\"},{\"n\":\"y\"}]}";
  plans::Sha256 sha;
  for (size_t i = 0; i < text.size(); i += 7) sha.Update(std::string_view(text).substr(i, 7));
  CHECK(sha.Hex() == plans::Sha256Hex(text));
  plans::Sha256 empty;
  CHECK(empty.Hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(plans::JsonDigest(nlohmann::json::parse(text)) == "sha256:" + plans::Sha256Hex(text));
}

TEST_CASE("WorkerPool: every index once per round, over many rounds, with 0 to 3 helpers") {
  for (size_t helpers : {size_t{0}, size_t{1}, size_t{3}}) {
    CAPTURE(helpers);
    plans::WorkerPool pool(helpers);
    for (size_t round = 0; round < 300; ++round) {
      const size_t count = round % 17 == 0 ? 0 : (round * 7) % 97 + 1;
      std::vector<std::atomic<int>> seen(count);
      std::atomic<size_t> sum{0};
      pool.ForEach(count, [&](size_t i) {
        ++seen[i];
        sum += i;
      });
      // ForEach has returned: every call has finished, none is still running.
      for (size_t i = 0; i < count; ++i) REQUIRE(seen[i].load() == 1);
      CHECK(sum.load() == (count ? count * (count - 1) / 2 : 0));
    }
  }
}

TEST_CASE("WorkerPool: the helpers do share the work") {
  plans::WorkerPool pool(1);
  std::atomic<bool> helper_ran{false};
  const auto caller = std::this_thread::get_id();
  // The caller's calls wait (60 s at most in all, for a loaded machine) until the helper has
  // taken an index: the caller alone takes them all only if the helper never runs.
  std::atomic<int> taken{0};
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  pool.ForEach(64, [&](size_t) {
    ++taken;
    if (std::this_thread::get_id() != caller) helper_ran = true;
    while (!helper_ran && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  CHECK(taken.load() == 64);
  CHECK(helper_ran.load());
}

TEST_CASE("WorkerPool: a call that throws reaches the caller once every call has ended; the pool goes on") {
  plans::WorkerPool pool(1);
  for (int round = 0; round < 50; ++round) {
    CAPTURE(round);
    std::atomic<int> running{0}, ended{0};
    bool threw = false;
    try {
      pool.ForEach(200, [&](size_t i) {
        ++running;
        if (i == static_cast<size_t>(round) * 3) {
          --running;
          throw std::runtime_error("node " + std::to_string(i));
        }
        std::this_thread::yield();
        --running;
        ++ended;
      });
    } catch (const std::runtime_error& e) {
      threw = true;
      CHECK(std::string(e.what()) == "node " + std::to_string(round * 3));
    }
    CHECK(threw);
    CHECK(running.load() == 0);   // nothing still inside `work` once ForEach has returned
    CHECK(ended.load() < 200);
  }
  // The next round runs whole.
  std::atomic<int> n{0};
  pool.ForEach(100, [&](size_t) { ++n; });
  CHECK(n.load() == 100);
}

TEST_CASE("ForEachBounded: every index once, never more than fanout at a time, a throw reaches the caller") {
  for (int fanout : {1, 3, 64}) {
    CAPTURE(fanout);
    std::vector<std::atomic<int>> seen(40);
    std::atomic<int> now{0}, most{0};
    plans::ForEachBounded(40, fanout, [&](size_t i) {
      const int in = ++now;
      for (int m = most.load(); in > m && !most.compare_exchange_weak(m, in);) {}
      ++seen[i];
      std::this_thread::yield();
      --now;
    });
    for (auto& s : seen) CHECK(s.load() == 1);
    CHECK(most.load() <= fanout);
  }
  CHECK_THROWS_AS(plans::ForEachBounded(10, 4, [](size_t i) { if (i == 7) throw std::runtime_error("x"); }),
                  std::runtime_error);
}

TEST_CASE("JobThreads: each job's result through its future, on the pool's threads, a throw in its future") {
  std::set<std::thread::id> ran_on;
  std::mutex mu;
  {
    plans::JobThreads jobs(3);
    std::vector<std::future<size_t>> results;
    for (size_t i = 0; i < 500; ++i)
      results.push_back(jobs.Submit([i, &ran_on, &mu] {
        std::lock_guard lock(mu);
        ran_on.insert(std::this_thread::get_id());
        return i * i;
      }));
    for (size_t i = 0; i < results.size(); ++i) CHECK(results[i].get() == i * i);
    auto failing = jobs.Submit([]() -> int { throw std::runtime_error("job"); });
    CHECK_THROWS_AS(failing.get(), std::runtime_error);
    auto after = jobs.Submit([] { return 7; });   // a throw does not stop the threads
    CHECK(after.get() == 7);
  }
  CHECK(ran_on.count(std::this_thread::get_id()) == 0);
  CHECK(!ran_on.empty());
  CHECK(ran_on.size() <= 3);
}

TEST_CASE("JobThreads: jobs still queued when it goes run before it is gone") {
  std::atomic<int> ran{0};
  {
    plans::JobThreads jobs(1);
    for (int i = 0; i < 50; ++i) jobs.Submit([&ran] { std::this_thread::yield(); ++ran; });   // futures dropped
  }
  CHECK(ran.load() == 50);
}
