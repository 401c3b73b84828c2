// Merge precedence and provenance of the per-node desired state.
#include <doctest/doctest.h>

#include "inventory/load.h"
#include "inventory/resolve.h"

using namespace plumb;
using namespace plumb::inventory;

namespace {

LoadedCluster Load(const std::string& inventory, std::map<std::string, std::string> more = {}) {
  more["inventory.yaml"] = inventory;
  if (!more.count("stacks/base.yaml")) {
    more["stacks/base.yaml"] =
        "kernel: 5.15.0-1\nsysctl: { vm.swappiness: 60, net.core.rmem_max: 1 }\n"
        "packages: { a: \"1.0\", b: \"2.0\" }\n";
  }
  more["stacks/h100.yaml"] = "kernel: 5.15.0-2\nnvidia: { driver: 550.90.07 }\n";
  more["rollouts/slow.yaml"] = "canary: 1\n";
  more["rollouts/fast.yaml"] = "canary: 0\n";
  MemorySource src(std::move(more));
  return LoadClusterFrom(src, Source{"mem", "HEAD", "c0ffee"});
}

}  // namespace

TEST_CASE("resolve: the stack comes from the nearest group; own beats parent; later group wins") {
  auto lc = Load(
      "cluster: c\n"
      "nodes:\n"
      "  - { name: a, address: a.example, groups: [child] }\n"      // own stack beats parent's
      "  - { name: b, address: b.example, groups: [plain] }\n"      // inherits parent's stack
      "  - { name: c, address: c.example, groups: [child, plain] }\n"  // later group wins
      "  - { name: d, address: d.example, groups: [plain, child] }\n"
      "groups:\n"
      "  root: { stack: base, rollout: slow }\n"
      "  plain: { parents: [root] }\n"
      "  child: { parents: [root], stack: h100, rollout: fast }\n");
  REQUIRE_MESSAGE(lc.ok(), lc.diags.ToText());
  CHECK(lc.desired.at("a").stack == "h100");
  CHECK(lc.desired.at("a").stack_from == "child");
  CHECK(lc.desired.at("b").stack == "base");
  CHECK(lc.desired.at("b").stack_from == "root");
  CHECK(lc.desired.at("c").stack == "base");
  CHECK(lc.desired.at("d").stack == "h100");
  CHECK(lc.desired.at("a").rollout == "fast");
  CHECK(lc.desired.at("b").rollout == "slow");
  CHECK(lc.desired.at("b").rollout_from == "root");
}

TEST_CASE("resolve: overrides apply ancestors first, node's groups in order; deep merge") {
  auto lc = Load(
      "cluster: c\n"
      "nodes:\n"
      "  - { name: n, address: n.example, groups: [site, gpu] }\n"
      "groups:\n"
      "  root: { stack: base, overrides: { sysctl: { vm.swappiness: 10, kernel.pid_max: 1 } } }\n"
      "  site: { overrides: { sysctl: { vm.swappiness: 20 }, packages: { c: \"3.0\" } } }\n"
      "  gpu:  { parents: [root], overrides: { sysctl: { kernel.pid_max: 2 } }, rollout: slow }\n");
  REQUIRE_MESSAGE(lc.ok(), lc.diags.ToText());
  const NodeDesired& nd = lc.desired.at("n");
  // Order: site (no parents), then root (gpu's parent), then gpu.
  CHECK(nd.groups == std::vector<std::string>{"site", "root", "gpu"});
  // root comes after site, so root's 10 beats site's 20; gpu (child) beats root for pid_max.
  CHECK((*nd.desired)["sysctl"]["vm.swappiness"] == 10);
  CHECK((*nd.desired)["sysctl"]["kernel.pid_max"] == 2);
  // Maps merge: the stack's other sysctl key and the packages survive, site adds one.
  CHECK((*nd.desired)["sysctl"]["net.core.rmem_max"] == 1);
  CHECK((*nd.desired)["packages"] == nlohmann::json({{"a", "1.0"}, {"b", "2.0"}, {"c", "3.0"}}));
  // Provenance: each leaf names its file:line:column and its layer.
  CHECK(nd.origins->at("/sysctl/vm.swappiness").ToString() == "inventory.yaml:5:62");
  CHECK(nd.layers->at("/sysctl/vm.swappiness") == "group root");
  CHECK(nd.origins->at("/sysctl/kernel.pid_max").ToString() == "inventory.yaml:7:67");
  CHECK(nd.layers->at("/sysctl/kernel.pid_max") == "group gpu");
  CHECK(nd.origins->at("/sysctl/net.core.rmem_max").ToString() == "stacks/base.yaml:2:49");
  CHECK(nd.layers->at("/sysctl/net.core.rmem_max") == "stack base");
  CHECK(nd.origins->at("/packages/c").file == "inventory.yaml");
  CHECK(nd.origins->at("/kernel").ToString() == "stacks/base.yaml:1:9");
  // Every leaf has an origin, and nothing else does.
  size_t leaves = 0;
  std::function<void(const nlohmann::json&)> count = [&](const nlohmann::json& v) {
    if (v.is_object()) {
      for (const auto& x : v) count(x);
    } else {
      ++leaves;
    }
  };
  count(nd.desired);
  CHECK(nd.origins->size() == leaves);
}

TEST_CASE("resolve: scalars and lists replace, and a replaced subtree forgets old origins") {
  // A group replaces a whole mapping with a scalar-valued key set: the stack's packages.a stays
  // (maps merge) but a scalar replaced by a mapping drops the scalar's origin.
  nlohmann::json dst = {{"a", {{"x", 1}, {"y", 2}}}, {"l", {1, 2, 3}}, {"s", "old"}};
  OriginMap dst_o = {{"/a/x", {"s.yaml", 1, 1}}, {"/a/y", {"s.yaml", 2, 1}},
                     {"/l", {"s.yaml", 3, 1}}, {"/s", {"s.yaml", 4, 1}}};
  std::map<std::string, std::string> layers;
  nlohmann::json src = {{"a", {{"y", 20}}}, {"l", {9}}, {"s", {{"deep", true}}}};
  OriginMap src_o = {{"/a/y", {"i.yaml", 7, 1}}, {"/l", {"i.yaml", 8, 1}},
                     {"/s/deep", {"i.yaml", 9, 1}}};
  MergeInto(dst, dst_o, layers, src, src_o, "group g");
  CHECK(dst["a"] == nlohmann::json({{"x", 1}, {"y", 20}}));
  CHECK(dst["l"] == nlohmann::json({9}));
  CHECK(dst["s"] == nlohmann::json({{"deep", true}}));
  CHECK(dst_o.at("/a/x").file == "s.yaml");
  CHECK(dst_o.at("/a/y").file == "i.yaml");
  CHECK(dst_o.at("/l").line == 8);
  CHECK_FALSE(dst_o.count("/s"));
  CHECK(dst_o.at("/s/deep").line == 9);
  CHECK(layers.at("/s/deep") == "group g");
  CHECK_FALSE(layers.count("/a/x"));
}

TEST_CASE("resolve: cycles and unknown groups do not hang or crash the merge") {
  auto lc = Load(
      "cluster: c\n"
      "nodes: [ { name: n, address: n.example, groups: [a, ghost] } ]\n"
      "groups:\n"
      "  a: { parents: [b], stack: base }\n"
      "  b: { parents: [a] }\n");
  CHECK_FALSE(lc.ok());
  REQUIRE(lc.desired.count("n"));
  CHECK(lc.desired.at("n").stack == "base");
  CHECK(lc.desired.at("n").groups == std::vector<std::string>{"b", "a"});
}

TEST_CASE("resolve: nodes with the same groups share one merged desired state; others do not") {
  auto lc = Load(
      "cluster: c\n"
      "nodes:\n"
      "  - { name: a, address: 127.0.0.1, groups: [gpu] }\n"
      "  - { name: b, address: 127.0.0.2, groups: [gpu] }\n"
      "  - { name: c, address: 127.0.0.3, groups: [gpu, big] }\n"
      "groups:\n"
      "  gpu: { stack: base, rollout: slow }\n"
      "  big: { overrides: { sysctl: { vm.swappiness: 1 } } }\n");
  REQUIRE_MESSAGE(lc.ok(), lc.diags.ToText());
  const NodeDesired& a = lc.desired.at("a");
  const NodeDesired& b = lc.desired.at("b");
  const NodeDesired& c = lc.desired.at("c");
  CHECK(a.node == "a");
  CHECK(b.node == "b");
  CHECK(a.desired.SameAs(b.desired));
  CHECK(a.origins.SameAs(b.origins));
  CHECK(a.layers.SameAs(b.layers));
  CHECK_FALSE(a.desired.SameAs(c.desired));
  CHECK((*c.desired)["sysctl"]["vm.swappiness"] == 1);
  CHECK((*a.desired)["sysctl"]["vm.swappiness"] == 60);

  // Writing through one node copies first: the other node keeps what it had.
  NodeDesired a2 = a;
  a2.desired.Mut()["kernel"] = "changed";
  a2.origins.Mut()["/kernel"] = Location{"x.yaml", 1, 1};
  CHECK((*a2.desired)["kernel"] == "changed");
  CHECK((*b.desired)["kernel"] == "5.15.0-1");
  CHECK(b.origins->at("/kernel").file == "stacks/base.yaml");
  CHECK_FALSE(a2.desired.SameAs(b.desired));
  CHECK(a.desired.SameAs(b.desired));
}
