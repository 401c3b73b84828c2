// The loader over in-memory repos: semantic checks, every problem at once, the examples.
#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>

#include <filesystem>

#include <set>

#include "inventory/checks.h"
#include "inventory/load.h"

using namespace plumb;
using namespace plumb::inventory;

namespace {

const char* kLoadStack = "kernel: 5.15.0-119-generic\nnvidia: { driver: 550.90.07, cuda: 12.4.1 }\n";
const char* kRollout = "max_unavailable: 10%\nfailure_domain: { by: rack, mode: aligned }\n";

LoadedCluster Load(std::map<std::string, std::string> files) {
  MemorySource src(std::move(files));
  return LoadClusterFrom(src, Source{"mem", "HEAD", "0123456789abcdef0123456789abcdef01234567"});
}

const Diagnostic* Find(const LoadedCluster& lc, const std::string& code) {
  for (const auto& d : lc.diags.items()) {
    if (d.code == code) return &d;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("load: a small valid repo becomes a typed model") {
  auto lc = Load({{"inventory.yaml",
                   "cluster: pod-a\n"
                   "defaults:\n"
                   "  ssh: { user: admin, port: 2222, known_hosts: kh, connect_timeout: 90s, command_timeout: 1h30m }\n"
                   "  bmc: { ca: ca.pem, credentials: env:PLUMB_BMC }\n"
                   "nodes:\n"
                   "  - { name: a1, address: 10.0.0.1, ssh_port: 22, bmc: https://a1-bmc.example, rack: r1,\n"
                   "      leaf: l1, nvlink_domain: n1, groups: [g], labels: { sku: h100 } }\n"
                   "  - { name: a2, address: a2.example, rack: r2, groups: [g] }\n"
                   "groups:\n"
                   "  g: { stack: s, rollout: r }\n"},
                  {"stacks/s.yaml", kLoadStack},
                  {"stacks/README.md", "not a stack"},
                  {"rollouts/r.yaml", kRollout}});
  CHECK_MESSAGE(lc.ok(), lc.diags.ToText());
  const Cluster& c = lc.cluster;
  CHECK(c.name == "pod-a");
  CHECK(c.source.commit == "0123456789abcdef0123456789abcdef01234567");
  CHECK(c.ssh.user == "admin");
  CHECK(c.ssh.port == 2222);
  CHECK(c.ssh.connect_timeout_s == 90);
  CHECK(c.ssh.command_timeout_s == 5400);
  CHECK(c.bmc.credentials == "env:PLUMB_BMC");
  REQUIRE(c.nodes.size() == 2);
  CHECK(c.nodes[0].address == "10.0.0.1");
  CHECK(c.nodes[0].ssh_port == 22);
  CHECK_FALSE(c.nodes[1].ssh_port.has_value());
  CHECK(c.nodes[0].Domain("nvlink_domain") == "n1");
  CHECK(c.nodes[0].Domain("sku") == "h100");
  CHECK(c.nodes[0].where.ToString() == "inventory.yaml:6:5");
  CHECK(c.FindNode("a2") == &c.nodes[1]);
  CHECK(c.FindNode("zz") == nullptr);
  CHECK(c.stacks.size() == 1);  // README.md is ignored
  const RolloutPolicy& r = c.rollouts.at("r");
  CHECK(r.max_unavailable_is_percent);
  CHECK(r.max_unavailable_count == 10);
  CHECK(r.MaxUnavailable(32) == 3);
  CHECK(r.MaxUnavailable(5) == 1);  // never zero
  CHECK(r.domain_by == "rack");
  CHECK(r.domain_mode == DomainMode::kAligned);
  REQUIRE(lc.desired.size() == 2);
  CHECK((*lc.desired.at("a1").desired)["nvidia"]["driver"] == "550.90.07");
  CHECK(lc.desired.at("a1").stack == "s");
  CHECK(lc.desired.at("a1").rollout == "r");
}

TEST_CASE("load: semantic errors are all reported at once, located, with hints") {
  auto lc = Load({{"inventory.yaml",
                   "cluster: c\n"
                   "nodes:\n"
                   "  - { name: n1, address: n1.example, bmc: https://bmc.example, groups: [gpu] }\n"
                   "  - { name: n1, address: n2.example, groups: [gpu] }\n"
                   "  - { name: n3, address: n1.example, bmc: https://bmc.example, groups: [gpus] }\n"
                   "  - { name: n4, address: n4.example }\n"
                   "  - { name: n5, address: n5.example, groups: [bare] }\n"
                   "groups:\n"
                   "  gpu: { stack: h100, rollout: slurm-rollin, parents: [base] }\n"
                   "  bare: {}\n"
                   "  base: { parents: [top, nothere] }\n"
                   "  top: { parents: [gpu] }\n"},
                  {"stacks/h100-2025q4.yaml", kLoadStack},
                  {"rollouts/slurm-rolling.yaml", kRollout}});
  CHECK_FALSE(lc.ok());
  auto text = lc.diags.ToText();
  CAPTURE(text);
  const Diagnostic* d = Find(lc, "inventory.duplicate-name");
  REQUIRE(d);
  CHECK(d->ToString() == "inventory.yaml:4:13: error: duplicate node name 'n1' [key: nodes[1].name]\n"
                         "  hint: node 'n1' at line 3 already has it; each node needs its own");
  REQUIRE(Find(lc, "inventory.duplicate-address"));
  CHECK(Find(lc, "inventory.duplicate-address")->where.ToString() == "inventory.yaml:5:26");
  REQUIRE(Find(lc, "inventory.duplicate-bmc"));
  d = Find(lc, "inventory.unknown-group");
  REQUIRE(d);
  CHECK(d->ToString() == "inventory.yaml:5:73: error: unknown group 'gpus' [key: nodes[2].groups[0]]\n"
                         "  hint: did you mean 'gpu'?");
  d = Find(lc, "inventory.unknown-stack");
  REQUIRE(d);
  CHECK(d->where.ToString() == "inventory.yaml:9:17");
  CHECK(d->message == "unknown stack 'h100'");
  CHECK(d->hint == "there is no stacks/h100.yaml (known: h100-2025q4)");
  d = Find(lc, "inventory.unknown-rollout");
  REQUIRE(d);
  CHECK(d->hint == "did you mean 'slurm-rolling'?");
  d = Find(lc, "inventory.group-cycle");
  REQUIRE(d);
  CHECK(d->message == "groups inherit in a cycle: base -> top -> gpu -> base");
  d = Find(lc, "inventory.no-stack");
  REQUIRE(d);
  CHECK(d->ToString() == "inventory.yaml:6:5: error: node 'n4' gets no stack [key: nodes[3]]\n"
                         "  hint: give it groups: [...] with a group that sets stack: <name>");
  // n5's group exists but names no stack, nor do its parents.
  int no_stack = 0;
  for (const auto& x : lc.diags.items()) no_stack += x.code == "inventory.no-stack";
  CHECK(no_stack == 2);
  // The unknown parent 'nothere' too; and exactly one cycle report.
  int unknown_groups = 0, cycles = 0;
  for (const auto& x : lc.diags.items()) {
    unknown_groups += x.code == "inventory.unknown-group";
    cycles += x.code == "inventory.group-cycle";
  }
  CHECK(unknown_groups == 2);
  CHECK(cycles == 1);
}

TEST_CASE("load: a node no group gives a rollout policy is an error at the node, naming its groups") {
  // Validate used to accept it; plan then failed with "rollout policy '' not found", nowhere.
  auto lc = Load({{"inventory.yaml",
                   "cluster: c\n"
                   "nodes:\n"
                   "  - { name: a1, address: a1.example, groups: [gpu] }\n"
                   "  - { name: a2, address: a2.example, groups: [gpu, rolled] }\n"
                   "  - { name: a3, address: a3.example, groups: [child] }\n"
                   "groups:\n"
                   "  gpu: { stack: s }\n"
                   "  rolled: { rollout: r }\n"
                   "  child: { parents: [rolled], stack: s }\n"},
                  {"stacks/s.yaml", kLoadStack},
                  {"rollouts/r.yaml", kRollout}});
  CHECK_FALSE(lc.ok());
  std::vector<std::string> errors;
  for (const auto& d : lc.diags.items())
    if (d.severity == Severity::kError) errors.push_back(d.ToString());
  // a2 and a3 get r (from a group of theirs, or a parent); a1 none.
  CHECK(errors == std::vector<std::string>{
      "inventory.yaml:3:5: error: node 'a1' gets no rollout policy [key: nodes[0]]\n"
      "  hint: none of its groups (gpu) or their parents sets rollout: <name> (rollouts/<name>.yaml)"});
  CHECK(lc.desired.at("a3").rollout == "r");
}

TEST_CASE("load: missing inventory.yaml and an empty repo") {
  auto lc = Load({{"stacks/s.yaml", kLoadStack}});
  CHECK_FALSE(lc.ok());
  REQUIRE(Find(lc, "source.missing-inventory"));
  CHECK(Find(lc, "source.missing-inventory")->message == "no inventory.yaml in mem at HEAD");
  auto empty = Load({{"inventory.yaml", ""}});
  CHECK_FALSE(empty.ok());
  CHECK(empty.diags.items().at(0).code == "schema.type");
}

TEST_CASE("load: a file that is not YAML is one error, not a cascade") {
  auto lc = Load({{"inventory.yaml", "cluster: c\nnodes: [ { name: a, address: a.example, groups: [g] } ]\n"
                                     "groups: { g: { stack: s, rollout: r } }\n"},
                  {"rollouts/r.yaml", "max_unavailable: 1\n"},
                  {"stacks/s.yaml", "nvidia: { driver: [\n"}});
  CHECK(lc.diags.ErrorCount() == 1);
  CHECK(lc.diags.items().at(0).code == "yaml.syntax");
  CHECK(lc.diags.items().at(0).where.file == "stacks/s.yaml");
}

TEST_CASE("load: rollout failure domains must exist on the nodes") {
  auto lc = Load({{"inventory.yaml", "cluster: c\nnodes:\n"
                                     "  - { name: a, address: a.example, rack: r1, groups: [g] }\n"
                                     "  - { name: b, address: b.example, groups: [g] }\n"
                                     "groups: { g: { stack: s, rollout: r } }\n"},
                  {"stacks/s.yaml", kLoadStack},
                  {"rollouts/r.yaml", "failure_domain: { by: rack }\n"},
                  {"rollouts/q.yaml", "failure_domain: { by: rak }\n"}});
  const Diagnostic* w = Find(lc, "rollout.domain-missing");
  REQUIRE(w);
  CHECK(w->severity == Severity::kWarning);
  CHECK(w->where.ToString() == "rollouts/r.yaml:1:23");
  const Diagnostic* e = Find(lc, "rollout.unknown-domain");
  REQUIRE(e);
  CHECK(e->hint == "did you mean 'rack'?");
}

TEST_CASE("load: waivers are read and checked against node names") {
  auto lc = Load({{"inventory.yaml", "cluster: c\nnodes: [ { name: gpu001, address: a.example, groups: [g] } ]\n"
                                     "groups: { g: { stack: s, rollout: r } }\n"},
                  {"rollouts/r.yaml", kRollout},
                  {"stacks/s.yaml", kLoadStack},
                  {"waivers.yaml", "waivers:\n"
                                   "  - { nodes: \"gpu00[1-4]\", keys: \"sysctl.*\", reason: trial, owner: alice, expires: 2035-12-31 }\n"
                                   "  - { nodes: \"cpu*\", keys: \"*\", reason: nothing, owner: bob, expires: 2035-12-31 }\n"}});
  CHECK(lc.ok());
  REQUIRE(lc.cluster.waivers.size() == 2);
  CHECK(lc.cluster.waivers[0].expires == "2035-12-31");
  CHECK(lc.cluster.waivers[0].where.ToString() == "waivers.yaml:2:5");
  const Diagnostic* w = Find(lc, "waivers.no-match");
  REQUIRE(w);
  CHECK(w->message == "waiver for 'cpu*' matches no node");
  CHECK_FALSE(Find(lc, "waivers.expired"));

  auto old = Load({{"inventory.yaml", "cluster: c\nnodes: [ { name: gpu001, address: a.example, groups: [g] } ]\n"
                                      "groups: { g: { stack: s, rollout: r } }\n"},
                   {"rollouts/r.yaml", kRollout},
                   {"stacks/s.yaml", kLoadStack},
                   {"waivers.yaml", "waivers:\n"
                                    "  - { nodes: gpu001, keys: \"*\", reason: old one, owner: a, expires: 2020-01-31 }\n"
                                    "  - { nodes: gpu001, keys: \"*\", reason: bad day, owner: a, expires: 2026-02-30 }\n"
                                    "  - { nodes: gpu001, keys: \"*\", reason: not one, owner: a, expires: 2026-0x-30 }\n"}});
  for (const auto& d : old.diags.items()) CHECK(d.code != "inventory.internal");
  REQUIRE(Find(old, "waivers.expired"));
  CHECK(Find(old, "waivers.expired")->message == "waiver for 'gpu001' on '*' expired on 2020-01-31");
  CHECK(Find(old, "waivers.expired")->severity == Severity::kWarning);
  REQUIRE(Find(old, "waivers.bad-date"));
  // At the date itself, named as the user finds it in the list.
  CHECK(Find(old, "waivers.bad-date")->where.ToString() == "waivers.yaml:3:69");
  CHECK(Find(old, "waivers.bad-date")->key_path == "waivers[1].expires");
  CHECK(Find(old, "waivers.expired")->key_path == "waivers[0].expires");
}

TEST_CASE("load: a stack file that pins nothing is named (a warning, the repo still loads)") {
  auto lc = Load({{"inventory.yaml", "cluster: c\nnodes: [ { name: a, address: a.example, groups: [g] } ]\n"
                                     "groups: { g: { stack: s, rollout: r } }\n"},
                  {"rollouts/r.yaml", kRollout},
                  {"stacks/s.yaml", "# nothing pinned yet\n"}});
  CHECK(lc.ok());
  REQUIRE(Find(lc, "inventory.empty-stack"));
  CHECK(Find(lc, "inventory.empty-stack")->message == "stack 's' pins nothing");
  CHECK(Find(lc, "inventory.empty-stack")->where.file == "stacks/s.yaml");
}

TEST_CASE("load: the working tree is read like a commit: a symlink is refused, not followed") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("plumb-symlink-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "stacks");
  std::ofstream(dir / "inventory.yaml") << "cluster: c\nnodes: [ { name: a, address: a.example, "
                                           "groups: [g] } ]\ngroups: { g: { stack: s } }\n";
  fs::create_symlink("/etc/passwd", dir / "stacks" / "s.yaml");
  auto lc = LoadCluster({dir.string(), "HEAD", true, {}});
  CHECK_FALSE(lc.ok());
  REQUIRE(Find(lc, "source.not-a-file"));
  CHECK(Find(lc, "source.not-a-file")->message == "stacks/s.yaml is a symlink in the working tree");
  for (const auto& d : lc.diags.items()) CHECK(d.message.find("root:") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("load: the shipped examples are valid (from disk)") {
  for (const char* ex : {"minimal", "h100-pod"}) {
    CAPTURE(ex);
    auto lc = LoadCluster({std::string(PLUMB_SOURCE_DIR) + "/examples/" + ex, "HEAD", true, {}});
    CHECK_MESSAGE(lc.ok(), lc.diags.ToText());
    CHECK(lc.diags.items().at(0).code == "source.working-tree");  // the loud warning
    CHECK(lc.cluster.source.working_tree);
  }
  auto pod = LoadCluster({std::string(PLUMB_SOURCE_DIR) + "/examples/h100-pod", "HEAD", true, {}});
  CHECK(pod.cluster.nodes.size() == 32);
  CHECK(pod.desired.size() == 32);
  std::set<std::string> racks, stacks;
  for (const auto& n : pod.cluster.nodes) racks.insert(n.rack);
  for (const auto& [_, nd] : pod.desired) stacks.insert(nd.stack);
  CHECK(racks == std::set<std::string>{"r01", "r02", "r03", "r04"});
  CHECK(stacks.size() == 2);
}

TEST_CASE("load: garbage never throws") {
  for (const char* junk : {"\x00\x01", "[[[[", "- - -", "nodes: 5", "cluster: [a]\nnodes: {}",
                           "groups: { g: { parents: g } }", "nodes: [ 1, null, [], {} ]"}) {
    CAPTURE(junk);
    auto lc = Load({{"inventory.yaml", junk}, {"stacks/s.yaml", junk}, {"rollouts/r.yaml", junk},
                    {"waivers.yaml", junk}});
    CHECK_FALSE(lc.ok());
    for (const auto& d : lc.diags.items()) CHECK(d.code != "inventory.internal");
  }
}

TEST_CASE("load: x- keys hold anchors for <<: merges and never reach the desired state") {
  auto lc = Load({{"inventory.yaml",
                   "cluster: c\n"
                   "x-train: &train { rack: r01, groups: [g] }\n"
                   "nodes:\n"
                   "  - { <<: *train, name: a, address: a.example }\n"
                   "  - { <<: *train, name: b, address: b.example, rack: r02 }\n"
                   "groups: { g: { stack: s, rollout: r, overrides: { x-note: { kernel: x }, ofed: 24.07-0.6.1.0 } } }\n"},
                  {"rollouts/r.yaml", kRollout},
                  {"stacks/s.yaml", std::string("x-common: &c { driver: 550.90.07 }\n") +
                                        "nvidia: { <<: *c, cuda: 12.4.1 }\n"}});
  REQUIRE_MESSAGE(lc.ok(), lc.diags.ToText());
  CHECK(lc.cluster.nodes[0].rack == "r01");
  CHECK(lc.cluster.nodes[1].rack == "r02");
  CHECK(lc.cluster.nodes[1].groups == std::vector<std::string>{"g"});
  const NodeDesired& nd = lc.desired.at("a");
  CHECK(nd.desired == nlohmann::json({{"nvidia", {{"driver", "550.90.07"}, {"cuda", "12.4.1"}}},
                                      {"ofed", "24.07-0.6.1.0"}}));
  CHECK(nd.origins->at("/nvidia/driver").ToString() == "stacks/s.yaml:1:24");
  CHECK_FALSE(nd.origins->count("/x-common/driver"));
  // Outside x- keys, an unknown key is still an error.
  auto bad = Load({{"inventory.yaml", "cluster: c\nnodes: [ { name: a, address: a.example } ]\nxnote: 1\n"}});
  REQUIRE_FALSE(bad.ok());
  REQUIRE(Find(bad, "schema.unknown-key"));
  CHECK(Find(bad, "schema.unknown-key")->key_path == "xnote");
}

TEST_CASE("load: a typo in a group's definition is the error, not 'gets no stack' on each node") {
  auto lc = Load({{"inventory.yaml", "cluster: c\nnodes:\n"
                                     "  - { name: a, address: a.example, groups: [g] }\n"
                                     "  - { name: b, address: b.example, groups: [g] }\n"
                                     "  - { name: c, address: c.example, groups: [h] }\n"
                                     "groups:\n  g: { stak: s }\n  h: {}\n"},
                  {"stacks/s.yaml", kLoadStack}});
  CHECK_FALSE(lc.ok());
  int unknown = 0, no_stack = 0;
  for (const auto& d : lc.diags.items()) {
    if (d.code == "inventory.no-stack") {
      ++no_stack;
      CHECK(d.message == "node 'c' gets no stack");   // h really sets none: still said
    }
    if (d.key_path == "groups.g.stak") ++unknown;
  }
  CHECK(unknown == 1);
  CHECK(no_stack == 1);
}

TEST_CASE("load: nodes sharing one BMC each name their system on it (bmc_system)") {
  auto repo = [](const std::string& nodes) {
    return Load({{"inventory.yaml", "cluster: c\nnodes:\n" + nodes + "groups:\n  g: { stack: s, rollout: r }\n"},
                 {"stacks/s.yaml", kLoadStack},
                 {"rollouts/r.yaml", kRollout}});
  };
  // An HPE Cray EX blade: one BMC, two nodes.
  auto ok = repo("  - { name: x0n0, address: x0n0.example, bmc: https://x0b0.example, bmc_system: Node0, groups: [g] }\n"
                 "  - { name: x0n1, address: x0n1.example, bmc: https://x0b0.example, bmc_system: Node1, groups: [g] }\n");
  CHECK_MESSAGE(ok.ok(), ok.diags.ToText());
  CHECK(ok.cluster.nodes[1].bmc_system == "Node1");

  auto unnamed = repo("  - { name: x0n0, address: x0n0.example, bmc: https://x0b0.example, bmc_system: Node0, groups: [g] }\n"
                      "  - { name: x0n1, address: x0n1.example, bmc: https://x0b0.example, groups: [g] }\n");
  const Diagnostic* d = Find(unnamed, "inventory.shared-bmc-without-system");
  REQUIRE(d);
  CHECK(d->message == "BMC 'https://x0b0.example' is shared with node 'x0n0' (line 3), and node 'x0n1' "
                      "names no bmc_system");
  CHECK(d->key_path == "nodes[1].bmc");
  CHECK(d->hint.find("bmc_system: Node1") != std::string::npos);

  auto twice = repo("  - { name: x0n0, address: x0n0.example, bmc: https://x0b0.example, bmc_system: Node1, groups: [g] }\n"
                    "  - { name: x0n1, address: x0n1.example, bmc: https://x0b0.example, bmc_system: Node1, groups: [g] }\n");
  d = Find(twice, "inventory.duplicate-bmc-system");
  REQUIRE(d);
  CHECK(d->message == "duplicate system 'Node1' on BMC 'https://x0b0.example'");
  CHECK(d->key_path == "nodes[1].bmc_system");

  auto orphan = repo("  - { name: n, address: n.example, bmc_system: Node0, groups: [g] }\n");
  REQUIRE(Find(orphan, "inventory.bmc-system-without-bmc"));

  auto bad = repo("  - { name: n, address: n.example, bmc: https://b.example, bmc_system: \"Node 1;\", groups: [g] }\n");
  CHECK_FALSE(bad.ok());
  CHECK(bad.diags.ToText().find("nodes[0].bmc_system") != std::string::npos);
}

TEST_CASE("load: a pinned key that no module checks is an error at its file:line") {
  // inventory/ cannot see modules: the caller says which pointers are checked.
  inventory::Cluster c;
  inventory::Stack s;
  s.name = "h100";
  s.pins = {{"kernel", "k2"}, {"fabric", {{"roce", {{"trust", "dscp"}}}}}};
  s.origins = {{"/kernel", {"stacks/h100.yaml", 1, 9}},
               {"/fabric/roce", {"stacks/h100.yaml", 4, 3}}};
  c.stacks["h100"] = s;
  inventory::Group g;
  g.name = "gpu";
  g.overrides = {{"fabric", {{"roce", {{"pfc", "0,0,0,1,0,0,0,0"}}}}}};
  g.override_origins = {{"/fabric/roce/pfc", {"inventory.yaml", 12, 20}}};
  c.groups["gpu"] = g;
  Diagnostics d;
  inventory::CheckPinnedKeys(
      c, [](std::string_view p) { return p == "/kernel"; }, d);
  REQUIRE(d.items().size() == 2);
  std::set<std::string> where;
  for (const auto& x : d.items()) {
    CHECK(x.code == "inventory.unchecked-key");
    where.insert(x.where.ToString() + " " + x.key_path);
  }
  CHECK(where == std::set<std::string>{"stacks/h100.yaml:4:3 fabric.roce.trust",
                                       "inventory.yaml:12:20 fabric.roce.pfc"});
}

TEST_CASE("load: ssh.jump - a node's own beats its nearest group's, which beats the default; none is direct") {
  auto lc = Load({{"inventory.yaml",
                   "cluster: pod-a\n"
                   "defaults:\n"
                   "  ssh: { jump: ops@bastion.example }\n"
                   "nodes:\n"
                   "  - { name: a1, address: 10.0.0.1, groups: [g] }\n"
                   "  - { name: b1, address: 10.1.0.1, groups: [g, pod-b] }\n"
                   "  - { name: b2, address: 10.1.0.2, groups: [g, pod-b], ssh: { jump: none } }\n"
                   "  - { name: b3, address: 10.1.0.3, groups: [g, pod-b], ssh: { jump: 'root@[fd00::1]:2222' } }\n"
                   "  - { name: c1, address: 10.2.0.1, groups: [g, pod-c] }\n"
                   "  - { name: d1, address: 10.3.0.1, groups: [g, pod-d] }\n"
                   "groups:\n"
                   "  g: { stack: s, rollout: r }\n"
                   "  pod-b: { ssh: { jump: 'bastion-b.example:2022' } }\n"
                   "  pod-c: { parents: [pod-b] }\n"
                   "  pod-d: { ssh: { jump: none } }\n"},
                  {"stacks/s.yaml", kLoadStack},
                  {"rollouts/r.yaml", kRollout}});
  REQUIRE_MESSAGE(lc.ok(), lc.diags.ToText());
  const Cluster& c = lc.cluster;
  CHECK(c.FindNode("a1")->ssh_jump == "ops@bastion.example");   // the default
  CHECK(c.FindNode("b1")->ssh_jump == "bastion-b.example:2022");  // its group's
  CHECK(c.FindNode("b2")->ssh_jump.empty());                       // its own none
  CHECK(c.FindNode("b3")->ssh_jump == "root@[fd00::1]:2222");     // its own
  CHECK(c.FindNode("c1")->ssh_jump == "bastion-b.example:2022");  // through a parent group
  CHECK(c.FindNode("d1")->ssh_jump.empty());                       // its group's none

  auto j = ParseJump("root@[fd00::1]:2222");
  REQUIRE(j.has_value());
  CHECK(j->user == "root");
  CHECK(j->host == "fd00::1");
  CHECK(j->port == 2222);
  CHECK(j->ToString() == "root@[fd00::1]:2222");
  j = ParseJump("bastion.example");
  REQUIRE(j.has_value());
  CHECK(j->user.empty());
  CHECK(j->port == 22);
  CHECK(j->ToString() == "bastion.example");
  for (const char* bad : {"", "none", "@h", "h:", "h:0", "h:65536", "h:12a", "[fd00::1", "[::1]x"}) {
    CAPTURE(bad);
    CHECK_FALSE(ParseJump(bad).has_value());
  }
}

TEST_CASE("load: a bad ssh.jump is an error at its file:line, naming the key") {
  auto lc = Load({{"inventory.yaml",
                   "cluster: pod-a\n"
                   "nodes:\n"
                   "  - { name: a1, address: 10.0.0.1, groups: [g], ssh: { jump: 'ops@' } }\n"
                   "groups:\n"
                   "  g: { stack: s, rollout: r, ssh: { jump: 'h:99999' } }\n"},
                  {"stacks/s.yaml", kLoadStack},
                  {"rollouts/r.yaml", kRollout}});
  CHECK_FALSE(lc.ok());
  const std::string text = lc.diags.ToText();
  CHECK(text.find("inventory.yaml:3:") != std::string::npos);
  CHECK(text.find("nodes[0].ssh.jump") != std::string::npos);
  CHECK(text.find("inventory.yaml:5:") != std::string::npos);
  CHECK(text.find("groups.g.ssh.jump") != std::string::npos);
  CHECK(text.find("ProxyJump") != std::string::npos);   // the hint says what a jump looks like
}
