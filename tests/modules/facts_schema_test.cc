// Every parser's output on every fixture validates against modules/<module>/facts.schema.json.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "modules/facts_schema.h"
#include "modules/fixtures.h"
#include "modules/registry.h"

using nlohmann::json;
using namespace plumb::modules;
using plumb::testing::FactsSchema;

namespace {

// The module's snippet: its probe, or an on-demand check's script (for a desired state that
// pins its health key).
std::string Snippet(const Module& m) {
  if (!m.Info().on_demand) return m.ProbeScript();
  return m.CheckScript({{"health", {{std::string(m.Name()), {{"min_busbw_gbps", 1}}}}}});
}

// Part names a snippet produces: plumb_run/plumb_cat/plumb_begin NAME, plumb_run_for SECS NAME.
// A name built on the node ("perfquery.$port") stands here for one example of it.
std::set<std::string> PartNames(const Module& m) {
  std::set<std::string> names;
  std::string s = Snippet(m);
  std::regex re("plumb_(run|cat|begin|run_for '[0-9]+') ([a-z_]+)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it)
    names.insert((*it)[2]);
  if (m.Name() == "ib_health") names.insert("perfquery.mlx5_0.1");
  return names;
}

}  // namespace

TEST_CASE("facts schemas: every fixture through every part of every module validates") {
  std::vector<std::string> fixtures;
  for (const auto& e : std::filesystem::recursive_directory_iterator(PLUMB_TEST_DATA))
    if (e.is_regular_file() && e.path().filename() != "SOURCES.md")
      fixtures.push_back(std::filesystem::relative(e.path(), PLUMB_TEST_DATA).string());
  REQUIRE(fixtures.size() > 50);
  int validated = 0;
  for (const Module* m : AllModules()) {
    if (Snippet(*m).empty()) continue;
    std::string name(m->Name());
    FactsSchema schema(name);
    for (const auto& part : PartNames(*m)) {
      for (const auto& f : fixtures) {
        for (const char* pm : {"dpkg\n", "rpm\n"}) {
          std::vector<ProbePart> parts = {{part, 0, plumb::testing::ReadFixture(f)}, {"pm", 0, pm}};
          auto facts = m->ParseProbe(FrameParts(parts), 0);
          if (!facts.ok()) continue;
          CAPTURE(name);
          CAPTURE(part);
          CAPTURE(f);
          CHECK_MESSAGE(schema.Errors(*facts).empty(), schema.Errors(*facts) << facts->dump());
          ++validated;
        }
      }
    }
    // A section with every part missing (all tools absent) validates too.
    std::vector<ProbePart> absent;
    for (const auto& part : PartNames(*m)) absent.push_back({part, 127, "plumb-absent: x\n"});
    auto facts = m->ParseProbe(FrameParts(absent), 0);
    if (facts.ok()) CHECK_MESSAGE(schema.Errors(*facts).empty(), name << ": " << schema.Errors(*facts));
  }
  CHECK(validated > 100);
  MESSAGE("validated " << validated << " parser outputs");
}

TEST_CASE("facts schemas: a wrong shape is rejected (the validator is live)") {
  FactsSchema kernel("kernel");
  CHECK_FALSE(kernel.Errors({{"release", 42}, {"boot_id", nullptr}, {"manager", "dpkg"}}).empty());
  CHECK_FALSE(kernel.Errors({{"release", "5.15.0"}, {"boot_id", nullptr}, {"manager", "dpkg"}, {"extra", 1}}).empty());
  CHECK(kernel.Errors({{"release", "5.15.0"}, {"boot_id", nullptr}, {"manager", "dpkg"}}).empty());
  FactsSchema marker("marker");
  CHECK_FALSE(marker.Errors({{"present", true}, {"commit", "abc"}, {"run", "r"}, {"time", "t"}}).empty());
}
