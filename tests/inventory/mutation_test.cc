// Mutated copies of the minimal example: whatever the bytes, loading returns diagnostics and
// never throws or crashes. Deterministic (fixed seed), so a failure reproduces.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "inventory/load.h"

using namespace plumb;
using namespace plumb::inventory;

namespace {

std::string ReadExample(const std::string& rel) {
  std::ifstream in(std::string(PLUMB_SOURCE_DIR) + "/examples/minimal/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Mutate(std::string s, std::mt19937& rng) {
  static const std::string kBytes = ":{}[],-?&*!|>'\"%@`#\n\t \\\x00\xff\xcd\xbe~.0123456789";
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < edits && !s.empty(); ++i) {
    size_t at = rng() % s.size();
    char c = kBytes[rng() % kBytes.size()];
    switch (rng() % 4) {
      case 0: s[at] = c; break;
      case 1: s.insert(s.begin() + static_cast<long>(at), c); break;
      case 2: s.erase(at, 1 + rng() % 8); break;
      default: s.insert(at, s.substr(rng() % s.size(), 1 + rng() % 16)); break;
    }
  }
  return s;
}

}  // namespace

TEST_CASE("mutated cluster repos give diagnostics, never a crash") {
  const std::map<std::string, std::string> files = {
      {"inventory.yaml", ReadExample("inventory.yaml")},
      {"stacks/base.yaml", ReadExample("stacks/base.yaml")},
      {"rollouts/one-at-a-time.yaml", ReadExample("rollouts/one-at-a-time.yaml")}};
  REQUIRE(files.at("inventory.yaml").size() > 100);
  std::mt19937 rng(20260101);
  int invalid = 0;
  for (int round = 0; round < 600; ++round) {
    std::map<std::string, std::string> mutated = files;
    auto it = mutated.begin();
    std::advance(it, rng() % mutated.size());
    it->second = Mutate(it->second, rng);
    MemorySource src(mutated);
    LoadedCluster lc = LoadClusterFrom(src, Source{"mem", "HEAD", "c0ffee"});
    for (const auto& d : lc.diags.items()) {
      CHECK_MESSAGE(d.code != "inventory.internal", d.ToString(), "\n", it->second);
      CHECK_MESSAGE(d.code != "schema.internal", d.ToString());
    }
    invalid += lc.ok() ? 0 : 1;
  }
  CHECK(invalid > 100);  // the mutations do break things (the test is not vacuous)
}
