// A plan is checked against the commit it names before apply touches anything; --limit narrows
// a saved plan to its nodes that match and forms its batches again.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "inventory/file_source.h"
#include "plans/plan/desired_record.h"
#include "plans/plan/plan_check.h"
#include "plans/plan/plan_json.h"
#include "plans/plan/planner.h"

using namespace plumb;

namespace {

// 8 nodes n1..n8 (racks: 4 each), kernel k1 -> k2 everywhere, policy max_unavailable 3,
// canary 1; the plan as the planner makes it.
struct Fixture {
  inventory::Cluster cluster;
  plans::DesiredByNode desired;
  plans::Plan plan;
  Fixture() {
    cluster.name = "pod";
    cluster.source.commit = std::string(40, 'a');
    inventory::RolloutPolicy p;
    p.name = "roll";
    p.max_unavailable_count = 3;
    p.canary = 1;
    cluster.rollouts["roll"] = p;
    for (int i = 1; i <= 8; ++i) {
      inventory::Node n;
      n.name = fmt::format("n{}", i);
      n.rack = i <= 4 ? "r1" : "r2";
      n.groups = {i % 2 ? "odd" : "even"};
      cluster.nodes.push_back(n);
      inventory::NodeDesired nd;
      nd.node = n.name;
      nd.rollout = "roll";
      nd.desired = nlohmann::json{{"kernel", "k2"}};
      desired[n.name] = nd;
      plans::NodePlan np;
      np.node = n.name;
      np.rollout = "roll";
      modules::Action a;
      a.module = "kernel";
      a.id = "kernel.install";
      a.key = "kernel";
      a.pointer = "/kernel";
      a.before = "k1";
      a.after = "k2";
      a.disruption = modules::Disruption::kReboot;
      np.actions.push_back({a, plans::ChangeReason::kIntent, {}});
      np.disruption = modules::Disruption::kReboot;
      plan.nodes.push_back(np);
    }
    plan.cluster = "pod";
    plan.source = cluster.source;
    plans::FormBatches(plan, cluster, desired, {});
    plans::SealPlan(plan);
  }
  std::string Errors(const Diagnostics& d) {
    std::string s;
    for (const auto& x : d.items()) s += x.key_path + ": " + x.message + "\n";
    return s;
  }
};

}  // namespace

TEST_CASE("plan check: a plan as the planner made it passes") {
  Fixture f;
  CHECK_FALSE(plans::CheckPlan(f.plan).HasErrors());
  CHECK_FALSE(plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr).HasErrors());
}

TEST_CASE("plan check: a re-sealed plan with a raised max_unavailable is refused, naming it") {
  Fixture f;
  f.plan.rollouts["roll"].max_unavailable_count = 12;
  plans::SealPlan(f.plan);   // the digest is fine: integrity is not authority
  CHECK(plans::VerifyPlanDigest(f.plan).ok());
  auto d = plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr);
  REQUIRE(d.HasErrors());
  CHECK(f.Errors(d).find("rollouts.roll.max_unavailable") != std::string::npos);
  CHECK(f.Errors(d).find("says max_unavailable 12 but commit") != std::string::npos);
}

TEST_CASE("plan check: merged batches beyond the commit's max_unavailable are refused") {
  Fixture f;
  plans::Batch all;
  all.rollout = "roll";
  all.canary = true;
  for (const auto& n : f.plan.nodes) all.nodes.push_back(n.node);
  f.plan.batches = {all};
  plans::SealPlan(f.plan);
  auto d = plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr);
  REQUIRE(d.HasErrors());
  CHECK(f.Errors(d).find("batches[0].nodes: batch 1 takes 8 node(s) out at once") != std::string::npos);
  CHECK(f.Errors(d).find("canary 1") != std::string::npos);
}

TEST_CASE("plan check: a dropped canary and a changed desired value are refused") {
  Fixture f;
  f.plan.batches[0].canary = false;
  f.plan.nodes[2].actions[0].action.after = "k9";
  auto d = plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr);
  CHECK(f.Errors(d).find("batches[0].canary") != std::string::npos);
  CHECK(f.Errors(d).find("nodes.n3.kernel: node n3: the plan sets kernel to k9 but commit") !=
        std::string::npos);
}

TEST_CASE("plan check: structural invariants") {
  Fixture f;
  f.plan.batches[1].nodes.push_back("n1");   // n1 now in two batches
  f.plan.batches[1].nodes.push_back("n99");  // and a node without a plan
  auto d = plans::CheckPlan(f.plan);
  CHECK(f.Errors(d).find("node n1 is in 2 batches") != std::string::npos);
  CHECK(f.Errors(d).find("batch node n99 has no plan") != std::string::npos);
}

TEST_CASE("plan --limit: only the plan's matching nodes, batches formed again, the rest named") {
  Fixture f;
  auto keep = plans::SelectPlanNodes(f.plan, f.cluster, "n[1-3,5]");
  REQUIRE(keep.ok());
  CHECK(*keep == std::set<std::string>{"n1", "n2", "n3", "n5"});
  std::vector<std::string> left;
  plans::Plan p = plans::LimitPlan(f.plan, *keep, f.cluster, f.desired, {}, &left);
  CHECK(left == std::vector<std::string>{"n4", "n6", "n7", "n8"});
  CHECK(p.nodes.size() == 4);
  std::set<std::string> batched;
  for (const auto& b : p.batches)
    for (const auto& n : b.nodes) batched.insert(n);
  CHECK(batched == *keep);
  REQUIRE_FALSE(p.batches.empty());
  CHECK(p.batches[0].canary);                 // the same policy: a canary first
  CHECK(p.batches[0].nodes.size() == 1);
  CHECK(plans::VerifyPlanDigest(p).ok());    // sealed anew
  CHECK_FALSE(plans::CheckPlanAgainstCommit(p, f.cluster, f.desired, nullptr).HasErrors());
  // Groups work; a term that names no node of the plan is an error naming it.
  auto odd = plans::SelectPlanNodes(f.plan, f.cluster, "@odd,!n1");
  REQUIRE(odd.ok());
  CHECK(*odd == std::set<std::string>{"n3", "n5", "n7"});
  auto typo = plans::SelectPlanNodes(f.plan, f.cluster, "n3,n[10-12]");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message.find("'n[10-12]' matches no node of the plan") != std::string::npos);
}

TEST_CASE("plan --limit that names no node is an error, not the whole plan") {
  Fixture f;
  for (const char* empty : {" ", ",", " , ,", "!", "!, !"}) {
    CAPTURE(empty);
    auto keep = plans::SelectPlanNodes(f.plan, f.cluster, empty);
    REQUIRE_FALSE(keep.ok());
    CHECK(keep.error().code == "limit.empty");
    CHECK(keep.error().message.find("names no node") != std::string::npos);
  }
  auto all = plans::SelectPlanNodes(f.plan, f.cluster, "");   // no --limit: the whole plan
  REQUIRE(all.ok());
  CHECK(all->size() == f.plan.nodes.size());
}

TEST_CASE("plan check: a scalar carried as the text its tool prints still matches") {
  Fixture f;
  f.desired["n1"].desired = nlohmann::json{{"kernel", "k2"}, {"sysctl", {{"vm.swappiness", 10}}}};
  modules::Action a;
  a.module = "sysctl";
  a.id = "sysctl.vm.swappiness";
  a.key = "sysctl.vm.swappiness";
  a.pointer = "/sysctl/vm.swappiness";
  a.after = "10";
  f.plan.nodes[0].actions.push_back({a, plans::ChangeReason::kIntent, {}});
  CHECK_FALSE(plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr).HasErrors());
  f.plan.nodes[0].actions.back().action.after = "11";
  CHECK(plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr).HasErrors());
}

TEST_CASE("plan check: 'already out' is the plan's word; only the live view makes it cost nothing") {
  // A re-sealed plan marks every node already out and merges them into one batch.
  Fixture f;
  for (auto& n : f.plan.nodes) n.already_unavailable = true;
  plans::Batch all;
  all.rollout = "roll";
  all.canary = true;
  for (const auto& n : f.plan.nodes) all.nodes.push_back(n.node);
  f.plan.batches = {all};
  // Without a live view nobody is out: refused.
  auto d = plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr);
  CHECK(f.Errors(d).find("takes 8 node(s) out at once") != std::string::npos);
  // The scheduler shows only n1 and n2 out: the other six still cost.
  std::map<std::string, modules::SchedulerNode> live;
  for (const char* n : {"n1", "n2"}) {
    live[n].name = n;
    live[n].drain = true;
  }
  auto d2 = plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, &live);
  CHECK(f.Errors(d2).find("takes 6 node(s) out at once") != std::string::npos);
}

// ---- A reviewed plan applied at another commit (the merge of its pull request) ----------

namespace {

// The Fixture's plan with its desired state recorded, as `plumb plan` records it, from a tree
// where n1..n8 take stack "s" from stacks/s.yaml.
struct MergeFixture : Fixture {
  inventory::MemorySource before{std::map<std::string, std::string>{
      {"inventory.yaml", "nodes: ..."}, {"stacks/s.yaml", "kernel: k2\n"}}};
  MergeFixture() {
    inventory::Stack s;
    s.name = "s";
    s.file = "stacks/s.yaml";
    cluster.stacks["s"] = s;
    for (auto& [n, nd] : desired) nd.stack = "s";
    plan.created_at = "2027-01-01T00:00:00.000Z";   // as the planner stamps it (the schema asks)
    plans::RecordDesiredState(plan, cluster, desired, &before);
    plans::SealPlan(plan);
  }
  // The cluster at the merge commit: the same, unless a test changes it.
  inventory::Cluster At(const std::string& sha) const {
    inventory::Cluster c = cluster;
    c.source.commit = sha;
    return c;
  }
};

const std::string kMerge(40, 'b');

}  // namespace

TEST_CASE("plan at another commit: accepted when every planned node wants the same there") {
  MergeFixture f;
  REQUIRE(f.plan.desired_states.size() == 1);   // eight nodes, one shared image
  for (const auto& n : f.plan.nodes) CHECK(n.desired_digest == f.plan.desired_states.begin()->first);
  CHECK(f.plan.desired_files.count("stacks/s.yaml"));
  CHECK_FALSE(plans::CheckPlan(f.plan).HasErrors());
  // A merge commit that changed nothing any planned node wants (a README, another cluster's
  // stack): the plan holds there.
  auto d = plans::CheckPlanAgainstCommit(f.plan, f.At(kMerge), f.desired, nullptr, &f.before);
  CHECK_MESSAGE(!d.HasErrors(), f.Errors(d));
}

TEST_CASE("plan at another commit: refused naming the nodes, keys and files that differ") {
  MergeFixture f;
  plans::DesiredByNode main = f.desired;
  for (const char* n : {"n1", "n3", "n5", "n7"}) main[n].desired = nlohmann::json{{"kernel", "k3"}};
  // A key the plan does not change at all: it differs all the same.
  main["n2"].desired = nlohmann::json{{"kernel", "k2"}, {"sysctl", {{"vm.swappiness", 10}}}};
  inventory::MemorySource after{std::map<std::string, std::string>{
      {"inventory.yaml", "nodes: ..."}, {"stacks/s.yaml", "kernel: k3\n"}}};
  auto d = plans::CheckPlanAgainstCommit(f.plan, f.At(kMerge), main, nullptr, &after);
  REQUIRE(d.HasErrors());
  const std::string e = f.Errors(d);
  // The four odd nodes differ the same way: named once, as a host list, with the key.
  CHECK(e.find("n[1,3,5,7]: the desired state at bbbbbbbbbbbb differs from the plan's (made at "
               "aaaaaaaaaaaa); changed: stacks/s.yaml") != std::string::npos);
  CHECK(e.find("kernel: k2 -> k3") != std::string::npos);
  CHECK(e.find("n2: the desired state") != std::string::npos);
  CHECK(e.find("sysctl.vm.swappiness: (absent) -> 10") != std::string::npos);
  CHECK(e.find("n4") == std::string::npos);   // unchanged nodes are not named
  for (const Diagnostic& x : d.items()) CHECK(x.code == "plan.desired-changed");
}

TEST_CASE("plan at another commit: a new waiver, another rollout, a removed node are differences") {
  MergeFixture f;
  inventory::Cluster main = f.At(kMerge);
  inventory::Waiver w;
  w.nodes = "n4";
  w.keys = "kernel";
  w.expires = "2099-01-01";
  main.waivers.push_back(w);
  plans::DesiredByNode desired = f.desired;
  desired["n6"].rollout = "other";
  desired.erase("n8");
  auto d = plans::CheckPlanAgainstCommit(f.plan, main, desired, nullptr);
  const std::string e = f.Errors(d);
  CHECK(e.find("n4: the desired state") != std::string::npos);
  CHECK(e.find("waivers: [] -> [{\"expires\":\"2099-01-01\",\"keys\":\"kernel\"}]") != std::string::npos);
  CHECK(e.find("rollout: roll -> other") != std::string::npos);
  CHECK(e.find("n8 planned at aaaaaaaaaaaa but not in commit bbbbbbbbbbbb") != std::string::npos);
}

TEST_CASE("plan at another commit: a plan that records no desired state applies at its own only") {
  Fixture f;   // no RecordDesiredState: as a version 1 plan
  auto d = plans::CheckPlanAgainstCommit(f.plan, [&] {
    inventory::Cluster c = f.cluster;
    c.source.commit = kMerge;
    return c;
  }(), f.desired, nullptr);
  REQUIRE(d.HasErrors());
  CHECK(d.items().front().code == "plan.commit-moved");
  // At its own commit nothing changes: the per-change check alone.
  CHECK_FALSE(plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr).HasErrors());
}

TEST_CASE("plan file: desired states survive the round trip; an edited image is caught") {
  MergeFixture f;
  const std::string text = plans::SealPlanToFile(f.plan);
  auto back = plans::PlanFromJson(nlohmann::json::parse(text));
  const std::string why = back.ok() ? std::string() : back.error().message;
  REQUIRE_MESSAGE(back.ok(), why);
  CHECK(plans::VerifyPlanDigest(*back).ok());
  CHECK(back->desired_states.size() == 1);
  CHECK(back->desired_files == f.plan.desired_files);
  CHECK(back->nodes[0].desired_digest == f.plan.nodes[0].desired_digest);
  CHECK_FALSE(plans::CheckPlan(*back).HasErrors());
  // Someone edits the recorded image (to pass the check at a commit that wants more) and
  // re-seals: the image no longer hashes to its key.
  back->desired_states.begin()->second.image["desired"]["kernel"] = "k9";
  plans::SealPlan(*back);
  auto d = plans::CheckPlan(*back);
  CHECK(f.Errors(d).find("hashes to") != std::string::npos);
}

TEST_CASE("plan file: a version 1 plan (an older plumb's journal) still reads and verifies") {
  Fixture f;
  f.plan.format_version = 1;
  plans::SealPlan(f.plan);
  nlohmann::json j = plans::PlanToJson(f.plan);
  CHECK_FALSE(j.contains("desired"));
  CHECK_FALSE(j["nodes"][0].contains("desired_digest"));
  auto back = plans::PlanFromJson(j);
  REQUIRE(back.ok());
  CHECK(back->format_version == 1);
  CHECK(plans::VerifyPlanDigest(*back).ok());
}

// ---- Health findings: checked as findings, never as desired values (issue 33) ------------

namespace {

// The MergeFixture's plan, n3 with a failed gpu_health check (pinned: expected_gpus 8; the
// finding's threshold is another setting's, {"max": 0}), recorded as `plumb plan` does.
struct HealthFixture : MergeFixture {
  HealthFixture() {
    for (auto& [n, nd] : desired)
      nd.desired = nlohmann::json{{"kernel", "k2"}, {"health", {{"gpu_health", {{"expected_gpus", 8}}}}}};
    plans::Finding f;
    f.check = {.module = "gpu_health", .id = "gpu_health.gpu3.ecc", .name = "GPU uncorrected ECC errors",
               .subject = "GPU 3", .status = modules::CheckStatus::kFail, .measured = 2,
               .threshold = {{"max", 0}}, .message = "2 uncorrected ECC errors since the driver loaded > 0"};
    plan.health = {{"n3", {f}}};
    // The rollout skips unhealthy nodes (the default): n3 in no batch.
    for (auto& n : plan.nodes) n.skipped_unhealthy = n.node == "n3";
    plans::FormBatches(plan, cluster, desired, {});
    plan.desired_states.clear();
    plans::RecordDesiredState(plan, cluster, desired, &before);
    plans::SealPlan(plan);
  }
};

}  // namespace

TEST_CASE("plan check: a failed health check is verified as a finding, at the plan's commit and at the merge") {
  HealthFixture f;
  CHECK_MESSAGE(!plans::CheckPlan(f.plan).HasErrors(), f.Errors(plans::CheckPlan(f.plan)));
  auto own = plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr, &f.before);
  CHECK_MESSAGE(!own.HasErrors(), f.Errors(own));
  auto merged = plans::CheckPlanAgainstCommit(f.plan, f.At(kMerge), f.desired, nullptr, &f.before);
  CHECK_MESSAGE(!merged.HasErrors(), f.Errors(merged));
  // It survives the plan file.
  auto back = plans::PlanFromJson(nlohmann::json::parse(plans::SealPlanToFile(f.plan)));
  REQUIRE_MESSAGE(back.ok(), back.error().message);
  auto again = plans::CheckPlanAgainstCommit(*back, f.At(kMerge), f.desired, nullptr, &f.before);
  CHECK_MESSAGE(!again.HasErrors(), f.Errors(again));
}

TEST_CASE("plan check: findings the commit cannot have made, and a skip its policy does not say, are refused") {
  HealthFixture f;
  // A finding of a module the commit does not pin.
  plans::Finding ib = f.plan.health[0].findings[0];
  ib.check.module = "ib_health";
  ib.check.id = "ib_health.mlx5_0.1.symbol_error";
  f.plan.health[0].findings.push_back(ib);
  auto d = plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr);
  CHECK(f.Errors(d).find("node n3: the plan reports a ib_health finding (ib_health.mlx5_0.1.symbol_error), "
                         "but commit aaaaaaaaaaaa pins no health.ib_health") != std::string::npos);
  f.plan.health[0].findings.pop_back();
  // The commit's rollout changes unhealthy nodes: the plan must not skip n3.
  inventory::Cluster change = f.cluster;
  change.rollouts["roll"].unhealthy = inventory::RolloutPolicy::Unhealthy::kChange;
  auto d2 = plans::CheckPlanAgainstCommit(f.plan, change, f.desired, nullptr);
  CHECK(f.Errors(d2).find("rollouts.roll.unhealthy: the plan's rollout 'roll' says unhealthy skip but "
                          "commit aaaaaaaaaaaa says change") != std::string::npos);
  CHECK(f.Errors(d2).find("nodes.n3.skipped_unhealthy: node n3: the plan skips it as unhealthy, but "
                          "commit aaaaaaaaaaaa says unhealthy: change") != std::string::npos);
  // A healthy node skipped, or an unhealthy one batched under skip: an edited plan.
  f.plan.nodes[0].skipped_unhealthy = true;   // n1, healthy
  f.plan.nodes[2].skipped_unhealthy = false;  // n3, unhealthy
  auto d3 = plans::CheckPlanAgainstCommit(f.plan, f.cluster, f.desired, nullptr);
  CHECK(f.Errors(d3).find("node n1: the plan skips it as unhealthy, but commit aaaaaaaaaaaa says it "
                          "failed no health check") != std::string::npos);
  CHECK(f.Errors(d3).find("node n3 failed a health check and rollout 'roll' says unhealthy: skip in "
                          "commit aaaaaaaaaaaa, but the plan changes it") != std::string::npos);
  auto s = plans::CheckPlan(f.plan);
  CHECK(f.Errors(s).find("node n1 is skipped as unhealthy, but the plan has no failed health check") !=
        std::string::npos);
  CHECK(f.Errors(s).find("node n3 is in 0 batches") != std::string::npos);
}
