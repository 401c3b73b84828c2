// AppendIndentedCompact must give dump(2)'s bytes from dump()'s: the plan file is written from
// each node's compact (digest) text, and must stay the document PlanToJson(...).dump(2) gives.
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "plans/core/json_text.h"

namespace plumb {
namespace {

nlohmann::json AnyValue(std::mt19937& rng, int depth) {
  static const std::vector<std::string> kText = {
      "", "550.90.07", "a \"quoted\" word", "back\\slash\\", "\\\"", "line\nbreak",
      "{\"not\": [json]}", "ünïcødé ✓", "tab\there", "ctl\x01", ",:[]{}", "trailing\\"};
  switch (std::uniform_int_distribution<int>(0, depth > 3 ? 5 : 8)(rng)) {
    case 0: return nullptr;
    case 1: return std::uniform_int_distribution<long long>(-1'000'000'000'000, 1'000'000'000'000)(rng);
    case 2: return std::uniform_int_distribution<unsigned long long>(0, ~0ULL)(rng);
    case 3: return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    case 4: return std::uniform_real_distribution<double>(-1e300, 1e300)(rng);
    case 5: return kText[std::uniform_int_distribution<size_t>(0, kText.size() - 1)(rng)];
    case 6: {
      nlohmann::json a = nlohmann::json::array();
      for (int i = std::uniform_int_distribution<int>(0, 4)(rng); i > 0; --i) a.push_back(AnyValue(rng, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (int i = std::uniform_int_distribution<int>(0, 4)(rng); i > 0; --i)
        o[kText[std::uniform_int_distribution<size_t>(0, kText.size() - 1)(rng)]] = AnyValue(rng, depth + 1);
      return o;
    }
  }
}

TEST_CASE("json text: compact text re-laid out is dump(2)'s text, at any depth") {
  for (unsigned seed = 1; seed <= 2000; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const nlohmann::json v = AnyValue(rng, 0);
    const int depth = static_cast<int>(seed % 4);
    std::string want = "prefix";
    std::string got = "prefix";
    plans::AppendIndented(want, v, depth);
    plans::AppendIndentedCompact(got, v.dump(), depth);
    REQUIRE(got == want);
  }
}

TEST_CASE("json text: empty containers stay on one line, nested ones open lines") {
  std::string out;
  plans::AppendIndentedCompact(out, R"({"a":[],"b":{},"c":[{}],"d":"x,y:{"})", 0);
  CHECK(out == "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    {}\n  ],\n  \"d\": \"x,y:{\"\n}");
}

}  // namespace
}  // namespace plumb
