#include <doctest/doctest.h>

#include <random>

#include <fmt/format.h>

#include "plans/plan/plan_json.h"
#include "plans/report/json_validate.h"
#include "plans/report/plan_text.h"
#include "plans/report/report_fixture.h"

using namespace plumb;
using plans::report::PlanToText;

namespace {

// The fixture's plan, completed as the planner would: batches, a policy, an estimate.
plans::Plan TextFullPlan(testing::ReportWorld& w) {
  plans::Plan p = w.plan;
  inventory::RolloutPolicy roll;
  roll.name = "roll";
  roll.file = "rollouts/roll.yaml";
  roll.domain_by = "rack";
  p.rollouts["roll"] = roll;
  p.batches.push_back({0, "roll", true, {"gpu002"}, {"r01"}, 1, 600});
  p.batches.push_back({1, "roll", false, {"gpu001"}, {}, 1, 15});
  p.peak_unavailable = 1;
  p.est_seconds = 615;
  p.blocking_jobs.push_back({"gpu002", {"1234 (alice: train-llm)"}});
  return p;
}

}  // namespace

TEST_CASE("plan text: per node changes, disruption summary, batches, jobs, unreadable") {
  testing::ReportWorld w;
  std::string t = PlanToText(TextFullPlan(w));
  CHECK(t.find("plumb plan: cluster pod-a at cccccccccccc (ref main)") != std::string::npos);
  CHECK(t.find("~ gpu002  [reboot]\n"
               "    ~ nvidia.driver: 535.161.08 -> 550.90.07  (reboot, intent)  stacks/h100.yaml:2:19\n"
               "    ~ sysctl.vm.swappiness: 60 -> 10  (none, repair)  stacks/h100.yaml:4:34\n") !=
        std::string::npos);
  CHECK(t.find("  drain + reboot     gpu002\n") != std::string::npos);
  CHECK(t.find("  live (no drain)    gpu001\n") != std::string::npos);
  CHECK(t.find("    1. canary  gpu002") != std::string::npos);
  CHECK(t.find("Peak nodes out at once: 1") != std::string::npos);
  CHECK(t.find("Estimated duration: 11m") != std::string::npos);
  CHECK(t.find("  gpu002: 1234 (alice: train-llm)") != std::string::npos);
  CHECK(t.find("Unreadable, not planned -- PLAN INCOMPLETE:\n  gpu004: timeout") != std::string::npos);
  CHECK(t.find("Plan: 2 node(s) to change (1 reboot, 1 none), 1 in sync, 1 unreadable.") !=
        std::string::npos);
  CHECK(t.find("Plan incomplete") != std::string::npos);
}

TEST_CASE("plan text: identical nodes collapse into one Slurm host list") {
  testing::ReportWorld w;
  plans::Plan p = w.plan;
  p.nodes.clear();
  for (int i = 1; i <= 16; ++i) {
    plans::NodePlan n = w.plan.nodes[1];
    n.node = fmt::format("gpu{:03}", i);
    p.nodes.push_back(n);
  }
  p.nodes[4].actions.pop_back();   // gpu005 differs
  std::string t = PlanToText(p);
  CHECK(t.find("~ gpu[001-004,006-016] (15 nodes)  [reboot]") != std::string::npos);
  CHECK(t.find("~ gpu005  [reboot]") != std::string::npos);
  size_t n = 0;
  for (size_t pos = t.find("nvidia.driver:"); pos != std::string::npos; pos = t.find("nvidia.driver:", pos + 1)) ++n;
  CHECK(n == 2);
  CHECK(t.find("  drain + reboot     gpu[001-016] (16 nodes)") != std::string::npos);
}

TEST_CASE("plan text: no changes says so, symbols for added and removed values") {
  testing::ReportWorld w;
  plans::Plan p = w.plan;
  p.nodes.clear();
  p.unreadable.clear();
  p.complete = true;
  p.in_sync = {"gpu001", "gpu002"};
  CHECK(PlanToText(p).find("No changes: 2 node(s) in sync, 0 unreadable.") != std::string::npos);
  modules::Action add;
  add.after = "1.2";
  CHECK(plans::report::ChangeSymbol(add) == '+');
  modules::Action del;
  del.before = "1.2";
  CHECK(plans::report::ChangeSymbol(del) == '-');
}

TEST_CASE("plan file: PlanToJson validates against schemas/plan.schema.json") {
  testing::ReportWorld w;
  plans::Plan p = TextFullPlan(w);
  p.diags.Add(Diagnostic::Warning("plan.x", "a warning", {"rollouts/roll.yaml", 3, 1}, "canary", "hint"));
  plans::SealPlan(p);
  const std::string schema = std::string(PLUMB_SOURCE_DIR) + "/schemas/plan.schema.json";
  auto j = plans::PlanToJson(p);
  auto errors = testing::ValidateAgainst(schema, j);
  INFO((errors.empty() ? std::string() : errors.front()));
  CHECK(errors.empty());
  // The schema is strict: a member the schema does not know, or a bad enum, is refused.
  auto extra = j;
  extra["nodes"][0]["surprise"] = 1;
  CHECK_FALSE(testing::ValidateAgainst(schema, extra).empty());
  auto bad = j;
  bad["nodes"][0]["actions"][0]["reason"] = "whim";
  CHECK_FALSE(testing::ValidateAgainst(schema, bad).empty());
  // And round-trips through the reader with its digest intact.
  auto back = plans::PlanFromJson(j);
  REQUIRE(back.ok());
  CHECK(plans::VerifyPlanDigest(*back).ok());
}

TEST_CASE("plan file: SealPlanToFile is SealPlan then PlanToJson(...).dump(2), byte for byte") {
  testing::ReportWorld w;
  plans::Plan a = TextFullPlan(w);
  plans::Plan b = a;
  plans::SealPlan(a);
  const std::string text = plans::SealPlanToFile(b);
  CHECK(!b.digest.empty());
  CHECK(b.digest == a.digest);
  CHECK(text == plans::PlanToJson(a).dump(2) + "\n");
  auto back = plans::PlanFromJson(nlohmann::json::parse(text));
  REQUIRE(back.ok());
  CHECK(plans::VerifyPlanDigest(*back).ok());
  // A node whose name sorts like a key, and a string holding the marker text, change nothing.
  b.nodes[0].node = "\n  \"est_seconds\": ";
  plans::Plan c = b;
  plans::SealPlan(c);
  CHECK(plans::SealPlanToFile(b) == plans::PlanToJson(c).dump(2) + "\n");
  b.nodes[0].actions[0].action.after = "tampered";
  plans::SealPlanToFile(b);
  CHECK(b.digest != a.digest);

  // Enough nodes for the nodes to be formatted on several threads; and none at all.
  plans::Plan many = TextFullPlan(w);
  const std::vector<plans::NodePlan> some = many.nodes;
  many.nodes.clear();
  for (int i = 0; i < 700; ++i)
    for (plans::NodePlan n : some) {
      n.node = fmt::format("{}-{:03}", n.node, i);
      many.nodes.push_back(std::move(n));
    }
  plans::Plan many_sealed = many;
  plans::SealPlan(many_sealed);
  CHECK(plans::SealPlanToFile(many) == plans::PlanToJson(many_sealed).dump(2) + "\n");
  CHECK(many.digest == many_sealed.digest);
  plans::Plan none = TextFullPlan(w);
  none.nodes.clear();
  plans::Plan none_sealed = none;
  plans::SealPlan(none_sealed);
  CHECK(plans::SealPlanToFile(none) == plans::PlanToJson(none_sealed).dump(2) + "\n");
  CHECK(none.digest == none_sealed.digest);

  // Bytes that are not UTF-8, in a node's change and in the plan's own diagnostics (a node's
  // odd output quoted in a reason): replaced by U+FFFD in both parts alike; the file is
  // written, is JSON, and reads back to the digest it carries.
  plans::Plan odd = TextFullPlan(w);
  odd.nodes[0].actions[0].action.summary = "have \xff\xfe version";
  odd.diags.Add(Diagnostic::Warning("plan.test", "node said \xc3\x28"));
  const std::string odd_text = plans::SealPlanToFile(odd);
  CHECK(odd_text.find("have \xef\xbf\xbd\xef\xbf\xbd version") != std::string::npos);
  CHECK(odd_text.find("node said \xef\xbf\xbd(") != std::string::npos);
  auto odd_back = plans::PlanFromJson(nlohmann::json::parse(odd_text));
  REQUIRE(odd_back.ok());
  CHECK(plans::VerifyPlanDigest(*odd_back).ok());
}

TEST_CASE("plan file: every plan read is validated against the schema first") {
  testing::ReportWorld w;
  plans::Plan p = TextFullPlan(w);
  plans::SealPlan(p);
  auto j = plans::PlanToJson(p);
  // A member the plan does not have, and a wrong type: refused by name, not half-read.
  auto extra = j;
  extra["nodes"][0]["surprise"] = 1;
  auto r = plans::PlanFromJson(extra);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "plan.malformed");
  CHECK(r.error().message.find("surprise") != std::string::npos);
  auto typed = j;
  typed["peak_unavailable"] = "many";
  auto t = plans::PlanFromJson(typed);
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().message.find("peak_unavailable") != std::string::npos);
}

namespace {

// Random JSON for an action's before/after: what facts and pins can hold, including the
// characters a hand-made splice could trip on (quotes, backslashes, newlines, the text of a
// top-level key, non-ASCII).
nlohmann::json RandomValue(std::mt19937& rng, int depth) {
  static const std::vector<std::string> kText = {
      "550.90.07", "", "a \"quoted\" word", "back\\slash", "line\nbreak", "\n  \"digest\": ",
      "\n  \"nodes\": []", "ünïcødé ✓", "tab\there", "{\"not\": \"json\"}"};
  switch (std::uniform_int_distribution<int>(0, depth > 2 ? 4 : 6)(rng)) {
    case 0: return nullptr;
    case 1: return std::uniform_int_distribution<long long>(-1'000'000'000'000, 1'000'000'000'000)(rng);
    case 2: return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    case 3: return std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
    case 4: return kText[std::uniform_int_distribution<size_t>(0, kText.size() - 1)(rng)];
    case 5: {
      nlohmann::json a = nlohmann::json::array();
      for (int i = std::uniform_int_distribution<int>(0, 3)(rng); i > 0; --i) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (int i = std::uniform_int_distribution<int>(0, 3)(rng); i > 0; --i)
        o[kText[std::uniform_int_distribution<size_t>(0, kText.size() - 1)(rng)]] = RandomValue(rng, depth + 1);
      return o;
    }
  }
}

}  // namespace

TEST_CASE("plan file: over random plans, the fast writer is the reference serializer and reads back the same") {
  // One plan serializer in meaning: SealPlanToFile (parallel, spliced) must give the bytes and
  // digest of SealPlan + PlanToJson(...).dump(2), and the file must read back into a plan that
  // writes the same JSON again. 300 plans from a fixed seed (printed on failure).
  testing::ReportWorld w;
  const plans::Plan base = TextFullPlan(w);
  for (unsigned seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    plans::Plan p = base;
    p.nodes.clear();
    const int nodes = std::uniform_int_distribution<int>(0, seed % 50 == 0 ? 600 : 12)(rng);
    for (int i = 0; i < nodes; ++i) {
      plans::NodePlan n = base.nodes[static_cast<size_t>(i) % base.nodes.size()];
      n.node = fmt::format("gpu{:05}", i);
      if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) n.node += "-\"odd\\name\"";
      n.facts_digest = std::uniform_int_distribution<int>(0, 1)(rng) ? "sha256:" + std::string(64, 'f') : "";
      n.already_unavailable = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
      for (plans::PlannedAction& a : n.actions) {
        a.action.before = RandomValue(rng, 0);
        a.action.after = RandomValue(rng, 0);
        a.action.summary = fmt::format("set {} ({})", a.action.key, seed);
      }
      p.nodes.push_back(std::move(n));
    }
    p.in_sync.clear();
    for (int i = std::uniform_int_distribution<int>(0, 5)(rng); i > 0; --i)
      p.in_sync.push_back(fmt::format("ok{:03}", i));
    p.est_seconds = std::uniform_int_distribution<int>(0, 100000)(rng);
    p.created_at = fmt::format("2026-11-{:02}T12:00:00Z", 1 + seed % 28);

    plans::Plan reference = p;
    plans::SealPlan(reference);
    const std::string reference_text = plans::PlanToJson(reference).dump(2) + "\n";
    const std::string fast_text = plans::SealPlanToFile(p);
    CHECK(p.digest == reference.digest);
    REQUIRE(fast_text == reference_text);
    auto back = plans::PlanFromJson(nlohmann::json::parse(fast_text));
    REQUIRE(back.ok());
    CHECK(plans::VerifyPlanDigest(*back).ok());
    CHECK(plans::PlanToJson(*back).dump(2) + "\n" == reference_text);
  }
}

TEST_CASE("plan text: each node's own commands under its change (apt on one family, dnf on the other)") {
  testing::ReportWorld w;
  plans::Plan p = w.plan;
  p.nodes.clear();
  plans::NodePlan deb = w.plan.nodes[1];
  deb.node = "gpu001";
  plans::NodePlan rpm = deb;
  rpm.node = "gpu002";
  plans::NodePlan deb2 = deb;
  deb2.node = "gpu003";
  for (auto* n : {&deb, &deb2})
    n->actions[0].action.params["commands"] = {"apt-get install -y 'nvidia-driver-550=550.90.07-0ubuntu1'"};
  rpm.actions[0].action.params["commands"] = {"dnf module enable -y 'nvidia-driver:550-dkms'",
                                              "dnf install -y 'nvidia-driver-3:550.90.07'"};
  p.nodes = {deb, rpm, deb2};
  std::string t = PlanToText(p);
  // Same changes, different commands: two groups, each with its own commands under the action.
  CHECK(t.find("~ gpu[001,003] (2 nodes)  [reboot]") != std::string::npos);
  CHECK(t.find("~ gpu002  [reboot]") != std::string::npos);
  CHECK(t.find("\n        $ apt-get install -y 'nvidia-driver-550=550.90.07-0ubuntu1'\n") != std::string::npos);
  CHECK(t.find("\n        $ dnf module enable -y 'nvidia-driver:550-dkms'\n"
               "        $ dnf install -y 'nvidia-driver-3:550.90.07'\n") != std::string::npos);
  CHECK(t.find("apt-get") < t.find("~ gpu002"));
}

TEST_CASE("plan text: health findings, a skipped node, every member named, why, and the facts' time (issue 33)") {
  testing::ReportWorld w;
  w.AddIssue33();
  plans::Plan p = TextFullPlan(w);
  p.batches = {{0, "roll", true, {"gpu001"}, {}, 1, 600}};   // gpu002 is in no batch
  p.blocking_jobs.clear();
  const std::string t = PlanToText(p);
  CHECK(t.find("plumb plan: cluster pod-a at cccccccccccc (ref main), 2026-11-29T12:00:00Z\n"
               "facts gathered 2026-10-29T12:00:00.000Z, 31d 0h before\n") == 0);
  // Each port a line of its own, named; each BIOS attribute a line; why where values agree.
  CHECK(t.find("    ~ fabric.infiniband.rate_gbps [mlx5_0 port 1]: 100.0 -> 400  (drain, intent)  stacks/h100.yaml:6:40\n"
               "    ~ fabric.infiniband.rate_gbps [mlx5_3 port 1]: 100.0 -> 400  (drain, intent)") != std::string::npos);
  CHECK(t.find("    ~ bios.SriovGlobalEnable: Disabled -> Enabled  (reboot, intent)") != std::string::npos);
  CHECK(t.find("    ~ nvidia.driver: 550.90.07 -> 550.90.07  (reboot, repair)  stacks/h100.yaml:2:19\n"
               "        why: nvidia-driver-550 is not (fully) installed\n") != std::string::npos);
  // The finding is not a change: its own section, naming node, check, GPU and value vs threshold.
  CHECK(t.find("~ gpu002  [reboot]  SKIPPED: unhealthy (rollout roll: unhealthy: skip; see Health)\n") !=
        std::string::npos);
  CHECK(t.find("Health (findings, not changes: nothing here is applied):\n"
               "  gpu002:  skipped\n"
               "    ! gpu_health: GPU uncorrected ECC errors on GPU 3: 2 (max 0): 2 uncorrected ECC errors "
               "since the driver loaded > 0  stacks/h100.yaml:9:30\n"
               "  gpu003:\n"
               "    ? gpu_health: GPU XID 13 on GPU 0: 1 (not 48, 63)") != std::string::npos);
  CHECK(t.find("health.gpu_health") == std::string::npos);   // never printed as a change
  CHECK(t.find("  drain + reboot     gpu001\n") != std::string::npos);   // gpu002 is not disrupted
  const size_t dis = t.find("Disruption:"), bat = t.find("Batches:");
  REQUIRE(dis < bat);
  CHECK(t.substr(dis, bat - dis).find("gpu002") == std::string::npos);
  CHECK(t.find("    + bios.WorkloadProfile: (absent) -> HPC  (reboot, intent)") != std::string::npos);
  CHECK(t.find("Not applied: left as it is, unhealthy (rollout roll: unhealthy: skip): gpu002; repair, "
               "then plan again") != std::string::npos);
  CHECK(t.find("Plan: 1 node(s) to change (1 reboot), 1 in sync, 1 unreadable; health: 2 node(s) unhealthy"
               ) == std::string::npos);
  CHECK(t.find("Plan: 1 node(s) to change (1 reboot), 1 in sync, 1 unreadable; health: 1 node(s) "
               "unhealthy, 2 finding(s), 1 node(s) skipped.") != std::string::npos);
  CHECK(plans::report::SkippedUnhealthyNote(p) ==
        "left as it is, unhealthy (rollout roll: unhealthy: skip): gpu002; repair, then plan again");
  // Only skipped nodes with changes: nothing to apply, said so.
  p.nodes.erase(p.nodes.begin());
  p.batches.clear();
  CHECK(PlanToText(p).find("Nothing to apply: 1 node(s) with changes left as they are (unhealthy)") !=
        std::string::npos);
  // And the plan file carries all of it through the schema.
  plans::SealPlan(p);
  auto back = plans::PlanFromJson(plans::PlanToJson(p));
  REQUIRE_MESSAGE(back.ok(), back.error().message);
  CHECK(PlanToText(*back) == PlanToText(p));
}

TEST_CASE("plan text and file: the stacks section, a stack losing its last node named with its jobs") {
  testing::ReportWorld w;
  plans::Plan p = TextFullPlan(w);
  p.stacks.push_back({"gpu-2025q3", 2, 0, {{"12", "alice", "train", "PENDING", "gpu-2025q3"}}});
  p.stacks.push_back({"gpu-2025q4", 0, 2, {}});
  const std::string t = PlanToText(p);
  CHECK(t.find("Stacks (nodes the schedulers show on each: now -> after this plan):\n"
               "  gpu-2025q3                       2 -> 0\n"
               "    LAST NODE LEAVES: 1 job(s) ask for it and would never run: 12 (alice: train, PENDING)\n"
               "  gpu-2025q4                       0 -> 2\n") != std::string::npos);
  plans::SealPlan(p);
  auto j = plans::PlanToJson(p);
  const std::string schema = std::string(PLUMB_SOURCE_DIR) + "/schemas/plan.schema.json";
  auto errors = testing::ValidateAgainst(schema, j);
  INFO((errors.empty() ? std::string() : errors.front()));
  CHECK(errors.empty());
  CHECK(j["stacks"][0]["stranded_jobs"][0]["id"] == "12");
  auto back = plans::PlanFromJson(j);
  REQUIRE(back.ok());
  CHECK(plans::VerifyPlanDigest(*back).ok());
  REQUIRE(back->stacks.size() == 2);
  CHECK(back->stacks[0].stranded.at(0).user == "alice");
  CHECK(back->stacks[0].stranded.at(0).stack == "gpu-2025q3");
  // The counts are covered by the digest.
  back->stacks[1].after = 1;
  CHECK_FALSE(plans::VerifyPlanDigest(*back).ok());
  // A plan without stacks has no such key: it reads and hashes as plans did before.
  plans::Plan none = TextFullPlan(w);
  plans::SealPlan(none);
  CHECK_FALSE(plans::PlanToJson(none).contains("stacks"));
  CHECK(PlanToText(none).find("Stacks") == std::string::npos);
}
