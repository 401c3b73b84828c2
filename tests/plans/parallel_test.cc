#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "plans/digest.h"
#include "plans/parallel.h"

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
