// Pin coherence: the rules are data; the engine reads the table and reports both pins.
#include <doctest/doctest.h>

#include "inventory/coherence.h"
#include "inventory/load.h"

using namespace plumb;
using namespace plumb::inventory;

namespace {

LoadedCluster LoadStack(const std::string& stack) {
  MemorySource src({{"inventory.yaml",
                     "cluster: c\nnodes:\n"
                     "  - { name: a, address: a.example, groups: [g] }\n"
                     "  - { name: b, address: b.example, groups: [g] }\n"
                     "groups: { g: { stack: s, rollout: r } }\n"},
                    {"stacks/s.yaml", stack},
                    {"rollouts/r.yaml", "max_unavailable: 1\n"}});
  return LoadClusterFrom(src, Source{"mem", "HEAD", "c0ffee"});
}

std::vector<Diagnostic> WithCode(const LoadedCluster& lc, const std::string& prefix) {
  std::vector<Diagnostic> out;
  for (const auto& d : lc.diags.items()) {
    if (d.code.rfind(prefix, 0) == 0) out.push_back(d);
  }
  return out;
}

}  // namespace

TEST_CASE("coherence: the built-in table is NVIDIA's CUDA -> minimum driver") {
  const auto& rules = BuiltinCompatRules();
  REQUIRE(rules.ok());
  const auto& table = rules->tables.at("cuda_min_driver");
  auto min_for = [&](const std::string& cuda) {
    for (const auto& r : table) {
      if (r.match == cuda) return r.min;
    }
    return std::string("?");
  };
  CHECK(min_for("12.0") == "525.60.13");
  CHECK(min_for("12.4") == "550.54.14");
  CHECK(min_for("12.6") == "560.28.03");
  CHECK(min_for("12.8") == "570.26");
  CHECK(rules->rules.size() == 3);
}

TEST_CASE("coherence: coherent pins pass") {
  auto lc = LoadStack("nvidia: { driver: 550.90.07, cuda: 12.4.1, nccl: 2.21.5-1+cuda12.4, "
                      "fabricmanager: 550.90.07 }\n");
  CHECK_MESSAGE(lc.ok(), lc.diags.ToText());
  // Exactly at the minimum is enough; two-part CUDA versions use the GA row.
  CHECK(LoadStack("nvidia: { driver: 560.28.03, cuda: \"12.6\" }\n").ok());
}

TEST_CASE("coherence: CUDA needs its minimum driver; both pins, both locations, the rule") {
  auto lc = LoadStack("nvidia:\n  driver: 550.90.07\n  cuda: 12.6.2\n");
  auto found = WithCode(lc, "coherence.cuda-driver");
  REQUIRE(found.size() == 1);  // two nodes, one stack: one report
  CHECK(found[0].ToString() ==
        "stacks/s.yaml:3:9: error: nvidia.cuda 12.6.2 needs nvidia.driver >= 560.35.03 (CUDA 12.6 "
        "Update 2), but nvidia.driver is 550.90.07 (set at stacks/s.yaml:2:11) [rule: cuda-driver] "
        "[key: nvidia.cuda]\n"
        "  hint: raise nvidia.driver to 560.35.03 or later, or pin an older nvidia.cuda; a CUDA "
        "toolkit needs at least the driver it was released with\n"
        "  affects: a, b");
  // 535.54.03 < 535.104.05 numerically though not as text.
  CHECK(WithCode(LoadStack("nvidia: { driver: 535.54.03, cuda: 12.2.2 }\n"), "coherence.").size() == 1);
  CHECK(WithCode(LoadStack("nvidia: { driver: 535.104.05, cuda: 12.2.2 }\n"), "coherence.").empty());
}

TEST_CASE("coherence: fabric manager must equal the driver") {
  auto lc = LoadStack("nvidia: { driver: 550.90.07, fabricmanager: 550.54.15 }\n");
  auto found = WithCode(lc, "coherence.fabricmanager-driver");
  REQUIRE(found.size() == 1);
  CHECK(found[0].message ==
        "nvidia.fabricmanager 550.54.15 must equal nvidia.driver 550.90.07 (set at "
        "stacks/s.yaml:1:19) [rule: fabricmanager-driver]");
  CHECK(found[0].where.ToString() == "stacks/s.yaml:1:45");
}

TEST_CASE("coherence: NCCL's +cudaX.Y must match the CUDA major") {
  auto lc = LoadStack("nvidia: { driver: 560.35.03, cuda: 12.6.2, nccl: 2.21.5-1+cuda11.8 }\n");
  auto found = WithCode(lc, "coherence.nccl-cuda-major");
  REQUIRE(found.size() == 1);
  CHECK(found[0].message ==
        "nvidia.nccl 2.21.5-1+cuda11.8 is built for nvidia.cuda 11, but nvidia.cuda is 12.6.2 "
        "(major 12, set at stacks/s.yaml:1:36) [rule: nccl-cuda-major]");
  // Same major, different minor: fine. No +cuda part: nothing to check.
  CHECK(LoadStack("nvidia: { driver: 560.35.03, cuda: 12.6.2, nccl: 2.21.5-1+cuda12.4 }\n").ok());
  CHECK(LoadStack("nvidia: { cuda: 12.6.2, nccl: 2.21.5-1 }\n").ok());
}

TEST_CASE("coherence: a CUDA version missing from the table is a warning, not silence") {
  auto lc = LoadStack("nvidia: { driver: 560.35.03, cuda: 12.7.0 }\n");
  CHECK(lc.ok());
  auto found = WithCode(lc, "coherence.unknown-version");
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::kWarning);
}

TEST_CASE("coherence: a group override can break (or fix) a stack's coherence") {
  MemorySource src({{"inventory.yaml",
                     "cluster: c\nnodes:\n"
                     "  - { name: a, address: a.example, groups: [g] }\n"
                     "  - { name: b, address: b.example, groups: [h] }\n"
                     "groups:\n"
                     "  g: { stack: s }\n"
                     "  h: { parents: [g], overrides: { nvidia: { driver: 535.183.01 } } }\n"},
                    {"stacks/s.yaml", "nvidia: { driver: 550.90.07, cuda: 12.4.1 }\n"}});
  auto lc = LoadClusterFrom(src, Source{"mem", "HEAD", "c0ffee"});
  auto found = WithCode(lc, "coherence.cuda-driver");
  REQUIRE(found.size() == 1);
  CHECK(found[0].message.find("(set at inventory.yaml:7:53)") != std::string::npos);
  CHECK(found[0].hint.find("affects: b") != std::string::npos);
}

TEST_CASE("coherence: the engine follows the data, not hard-coded versions") {
  auto rules = ParseCompatRules(
      "tables:\n  t: [ { cuda: \"1.0\", min: \"100.0\", release: \"one\" } ]\n"
      "rules:\n"
      "  - { id: r1, kind: min_version_table, subject: nvidia.cuda, object: nvidia.driver, table: t }\n"
      "  - { id: r2, kind: equal, a: kernel, b: ofed }\n",
      "custom.yaml");
  REQUIRE(rules.ok());
  NodeDesired nd;
  nd.node = "x";
  nd.desired = {{"nvidia", {{"cuda", "1.0.5"}, {"driver", "99.9"}}}, {"kernel", "1"}, {"ofed", "2"}};
  std::map<std::string, NodeDesired> desired{{"x", nd}};
  Diagnostics d;
  CheckCoherence(*rules, desired, d);
  REQUIRE(d.ErrorCount() == 2);
  CHECK(d.items()[0].code == "coherence.r1");
  CHECK(d.items()[0].message.find("needs nvidia.driver >= 100.0 (one)") != std::string::npos);
  CHECK(d.items()[1].code == "coherence.r2");
  auto bad = ParseCompatRules("rules: [ { id: x, kind: min_version_table, table: missing } ]\n", "b.yaml");
  CHECK_FALSE(bad.ok());
}
