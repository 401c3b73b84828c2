#include <doctest/doctest.h>

#include <algorithm>

#include <set>

#include <fmt/format.h>

#include "modules/registry.h"
#include "plans/observe/observed.h"
#include "plans/plan/plan_check.h"
#include "plans/plan/plan_json.h"
#include "plans/plan/planner.h"

using namespace plumb;
using modules::Action;
using modules::Disruption;
using nlohmann::json;

// Scheduler states are built with designated initializers naming only what matters.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

// A module owning the desired key "/<name>" (a scalar): the action is "set" with the given
// disruption when the fact differs.
class ScalarModule : public modules::Module {
 public:
  ScalarModule(std::string name, Disruption d, std::vector<std::string_view> after = {})
      : name_(std::move(name)), pointer_("/" + name_), disruption_(d) {
    info_.name = name_;
    info_.owns = {pointer_};
    info_.after = std::move(after);
  }
  ScalarModule(const ScalarModule&) = delete;   // info_ points into this object
  const modules::ModuleInfo& Info() const override { return info_; }
  std::vector<Action> Diff(const json& desired, const modules::Facts& facts) const override {
    const json& want = desired.at(name_);
    const json have = facts.value("value", json());
    if (want == have) return {};
    Action a;
    a.module = name_;
    a.id = name_ + ".set";
    a.key = name_;
    a.pointer = "/" + name_;
    a.summary = fmt::format("set {} (have {})", want.dump(), have.dump());
    a.before = have;
    a.after = want;
    a.disruption = disruption_;
    return {a};
  }

 private:
  std::string name_;
  std::string pointer_;
  Disruption disruption_;
  modules::ModuleInfo info_;
};

struct PlannerWorld {
  inventory::Cluster cluster;
  plans::DesiredByNode desired;
  std::map<std::string, plans::NodeFacts> observed;
  ScalarModule kernel{"kernel", Disruption::kReboot};
  ScalarModule sysctl{"sysctl", Disruption::kNone};

  // n nodes gpu01..gpuN, racks of `per_rack`, every node wants kernel=k2 and has k1.
  PlannerWorld(int n, int per_rack, const std::string& max_unavailable, const std::string& by = "",
        inventory::DomainMode mode = inventory::DomainMode::kSpread, int at_once = 1,
        int canary = 1) {
    cluster.name = "t";
    cluster.source.commit = std::string(40, 'a');
    inventory::RolloutPolicy p;
    p.name = "roll";
    p.max_unavailable_is_percent = max_unavailable.back() == '%';
    p.max_unavailable_count = std::stoi(max_unavailable);
    p.domain_by = by;
    p.domain_mode = mode;
    p.domain_at_once = at_once;
    p.canary = canary;
    cluster.rollouts["roll"] = p;
    for (int i = 1; i <= n; ++i) {
      inventory::Node node;
      node.name = fmt::format("gpu{:02}", i);
      node.rack = fmt::format("r{}", (i - 1) / per_rack + 1);
      cluster.nodes.push_back(node);
      inventory::NodeDesired nd;
      nd.node = node.name;
      nd.rollout = "roll";
      nd.desired = nlohmann::json{{"kernel", "k2"}};
      nd.origins.Mut()["/kernel"] = Location{"stacks/s.yaml", 1, 9};
      desired[node.name] = nd;
      plans::NodeFacts f;
      f.facts = {{"kernel", {{"value", "k1"}}}};
      f.facts_digest = "sha256:" + node.name;
      observed[node.name] = f;
    }
  }
  plans::PlannerInput Input() {
    plans::PlannerInput in;
    in.cluster = &cluster;
    in.desired = &desired;
    in.observed = observed;
    in.modules = {&kernel, &sysctl};
    in.now = "2026-11-29T00:00:00Z";
    return in;
  }
};

int Drained(const plans::Plan& plan, const plans::Batch& b) {
  int n = 0;
  for (const auto& name : b.nodes) n += plan.FindNode(name)->NeedsDrain();
  return n;
}

}  // namespace

TEST_CASE("planner: canary first, then batches within max_unavailable") {
  PlannerWorld w(10, 10, "3");
  auto plan = plans::MakePlan(w.Input());
  REQUIRE(plan.nodes.size() == 10);
  REQUIRE(plan.batches.size() == 4);  // 1 canary + 3 + 3 + 3
  CHECK(plan.batches[0].canary);
  CHECK(plan.batches[0].nodes == std::vector<std::string>{"gpu01"});
  for (size_t i = 1; i < plan.batches.size(); ++i) {
    CHECK_FALSE(plan.batches[i].canary);
    CHECK(Drained(plan, plan.batches[i]) <= 3);
  }
  CHECK(plan.peak_unavailable == 3);
  CHECK(plan.complete);
  CHECK(plan.nodes[0].disruption == Disruption::kReboot);
  CHECK(plan.nodes[0].actions[0].origin.ToString() == "stacks/s.yaml:1:9");
}

TEST_CASE("planner: percent max_unavailable counts nodes already drained or down") {
  PlannerWorld w(20, 20, "20%");   // 4 of 20
  w.desired["gpu20"].desired.Mut()["kernel"] = "k1";    // in sync: not in the change set
  w.desired["gpu19"].desired.Mut()["kernel"] = "k1";
  auto in = w.Input();
  in.scheduler["gpu20"] = {.name = "gpu20", .state = "drained", .drain = true, .drained = true,
                           .reason = "bad dimm"};
  in.scheduler["gpu19"] = {.name = "gpu19", .state = "down*", .down = true};
  auto plan = plans::MakePlan(in);
  for (const auto& b : plan.batches) CHECK(Drained(plan, b) <= 2);  // 4 allowed - 2 out
  CHECK(plan.peak_unavailable == 4);
}

TEST_CASE("planner: a changing node already out counts as out in every batch, not only its own") {
  // 6 nodes, max_unavailable 2; gpu06 has changes but an admin drained it. It is out for the
  // whole rollout (and stays drained after), so only one other node may be out at a time.
  PlannerWorld w(6, 6, "2");
  auto in = w.Input();
  in.scheduler["gpu06"] = {.name = "gpu06", .state = "drained", .drain = true, .drained = true,
                           .reason = "RMA gpu3"};
  auto plan = plans::MakePlan(in);
  REQUIRE_FALSE(plan.diags.HasErrors());
  std::set<std::string> batched;
  for (const auto& b : plan.batches) {
    int out = 1;   // gpu06
    for (const auto& name : b.nodes) {
      batched.insert(name);
      if (name != "gpu06") out += plan.FindNode(name)->NeedsDrain();
    }
    CHECK(out <= 2);
  }
  CHECK(batched.size() == 6);   // gpu06 is still planned (its changes; it stays drained)
  CHECK(plan.FindNode("gpu06")->admin_drained);
  CHECK(plan.peak_unavailable == 2);
}

TEST_CASE("planner: exhausted budget is an error, nothing needing a drain is scheduled") {
  PlannerWorld w(4, 4, "1");
  w.desired["gpu04"].desired.Mut()["kernel"] = "k1";
  auto in = w.Input();
  in.scheduler["gpu04"] = {.name = "gpu04", .state = "drained", .drain = true, .drained = true,
                           .reason = "admin"};
  auto plan = plans::MakePlan(in);
  CHECK(plan.batches.empty());
  CHECK(plan.diags.HasErrors());
  CHECK(plan.diags.items()[0].code == "plan.budget-exhausted");
}

TEST_CASE("planner: spread mode keeps at most N nodes per rack out") {
  PlannerWorld w(12, 4, "6", "rack", inventory::DomainMode::kSpread, 1, 0);
  auto plan = plans::MakePlan(w.Input());
  for (const auto& b : plan.batches) {
    std::map<std::string, int> per_rack;
    for (const auto& n : b.nodes) ++per_rack[w.cluster.FindNode(n)->rack];
    for (const auto& [rack, count] : per_rack) CHECK(count <= 1);
  }
  CHECK(plan.batches.size() == 4);   // 3 racks x 4 nodes, one per rack per batch
}

TEST_CASE("planner: aligned mode disturbs at most N racks at once and fills a rack first") {
  PlannerWorld w(12, 4, "4", "rack", inventory::DomainMode::kAligned, 1, 1);
  auto plan = plans::MakePlan(w.Input());
  for (const auto& b : plan.batches) CHECK(b.domains.size() <= 1);
  REQUIRE(plan.batches.size() >= 2);
  CHECK(plan.batches[0].nodes == std::vector<std::string>{"gpu01"});    // canary
  CHECK(plan.batches[1].nodes == std::vector<std::string>{"gpu02", "gpu03", "gpu04"});
  CHECK(plan.batches[2].domains == std::vector<std::string>{"r2"});
}

TEST_CASE("planner: unreadable nodes are left out and the plan is incomplete") {
  PlannerWorld w(3, 3, "1");
  w.observed["gpu02"].readable = false;
  w.observed["gpu02"].unreadable_reason = "timeout";
  w.observed["gpu03"].module_errors["kernel"] = "garbage from uname";
  auto plan = plans::MakePlan(w.Input());
  CHECK_FALSE(plan.complete);
  REQUIRE(plan.unreadable.size() == 2);
  CHECK(plan.unreadable[0].reason == "timeout");
  CHECK(plan.unreadable[1].reason.find("probe error: kernel") == 0);
  for (const auto& b : plan.batches)
    for (const auto& n : b.nodes) CHECK(n == "gpu01");
}

TEST_CASE("planner: facts without the module's shape (an edited snapshot) make the node unreadable, with why") {
  PlannerWorld w(3, 3, "1");
  w.observed["gpu02"].facts["kernel"] = "not an object";   // Diff's value() throws on this
  auto plan = plans::MakePlan(w.Input());
  CHECK_FALSE(plan.complete);
  REQUIRE(plan.unreadable.size() == 1);
  CHECK(plan.unreadable[0].node == "gpu02");
  CHECK(plan.unreadable[0].reason.find("the kernel facts do not read: ") == 0);
  CHECK(plan.unreadable[0].reason.find("type_error") != std::string::npos);
  // The other nodes are planned as ever.
  std::set<std::string> planned;
  for (const auto& n : plan.nodes) planned.insert(n.node);
  CHECK(planned.count("gpu01") == 1);
  CHECK(planned.count("gpu03") == 1);
  CHECK(planned.count("gpu02") == 0);
}

TEST_CASE("planner: a module read only in part is a module error where it is pinned (issue 12)") {
  // The snapshot of gpu03 holds kernel facts with a part error: the facts read are kept, and the
  // node is not planned on them, as with any module error.
  PlannerWorld w(3, 3, "1");
  plans::NodeObservation o;
  o.node = "gpu03";
  o.reachable = true;
  o.facts.emplace("kernel", modules::Facts{
      {"value", "k1"},
      {modules::kPartErrorsKey,
       {{{"part", "boot_id"}, {"code", "probe.kernel"}, {"message", "boot_id: not a UUID in line 1"}}}}});
  w.observed["gpu03"] = plans::ToNodeFacts(o);
  CHECK(w.observed["gpu03"].facts["kernel"]["value"] == "k1");
  auto plan = plans::MakePlan(w.Input());
  REQUIRE(plan.unreadable.size() == 1);
  CHECK(plan.unreadable[0].node == "gpu03");
  CHECK(plan.unreadable[0].reason == "probe error: kernel: probe.kernel: boot_id: not a UUID in line 1");
  CHECK_FALSE(plan.complete);
}

TEST_CASE("planner: a module error where nothing is pinned changes no verdict and is said once") {
  PlannerWorld w(3, 3, "1");
  w.observed["gpu01"].module_errors["sysctl"] = "probe.sysctl: garbage";   // sysctl: not pinned
  w.observed["gpu03"].module_errors["sysctl"] = "probe.sysctl: more garbage";
  auto plan = plans::MakePlan(w.Input());
  CHECK(plan.complete);
  CHECK(plan.nodes.size() == 3);
  REQUIRE(plan.diags.items().size() == 1);
  const Diagnostic& d = plan.diags.items()[0];
  CHECK(d.severity == Severity::kWarning);
  CHECK(d.code == "probe.sysctl");
  CHECK(d.message == "sysctl could not be read whole on 2 node(s) (gpu01, gpu03): probe.sysctl: garbage; "
                     "nothing they pin depends on it, so it changes no verdict");
  CHECK_FALSE(plan.diags.HasErrors());
}

TEST_CASE("planner: repair when the marker's commit wanted the same value, intent otherwise") {
  PlannerWorld w(2, 2, "1");
  std::string old_commit(40, 'b');
  plans::DesiredByNode then = w.desired;              // at the old commit: kernel k2 too
  then["gpu02"].desired.Mut()["kernel"] = "k0";             // gpu02's pin changed since
  w.observed["gpu01"].facts["marker"] = {{"commit", old_commit}};
  w.observed["gpu02"].facts["marker"] = {{"commit", old_commit}};
  auto in = w.Input();
  in.previous[old_commit] = &then;
  auto plan = plans::MakePlan(in);
  CHECK(plan.FindNode("gpu01")->actions[0].reason == plans::ChangeReason::kRepair);
  CHECK(plan.FindNode("gpu02")->actions[0].reason == plans::ChangeReason::kIntent);
}

// A module that only records the commit last applied (as marker does), under another name.
class StampModule final : public modules::Module {
 public:
  const modules::ModuleInfo& Info() const override { return info_; }
  std::vector<modules::Action> Diff(const nlohmann::json&, const modules::Facts&) const override { return {}; }

 private:
  modules::ModuleInfo info_{.name = "stamp", .applied_commit_key = "at"};
};

TEST_CASE("planner: the applied commit is read from the module the registry says records it") {
  PlannerWorld w(1, 1, "1");
  std::string old_commit(40, 'b');
  plans::DesiredByNode then = w.desired;   // the old commit wanted the same kernel
  w.observed["gpu01"].facts["stamp"] = {{"at", old_commit}};
  StampModule stamp;
  const modules::Registry with_stamp({&stamp});
  auto in = w.Input();
  in.previous[old_commit] = &then;
  in.registry = &with_stamp;
  auto plan = plans::MakePlan(in);
  CHECK(plan.FindNode("gpu01")->marker_commit == old_commit);
  CHECK(plan.FindNode("gpu01")->actions[0].reason == plans::ChangeReason::kRepair);
  // The real modules know no "stamp": no marker commit, so the change is intent.
  in.registry = &modules::DefaultRegistry();
  auto real = plans::MakePlan(in);
  CHECK(real.FindNode("gpu01")->marker_commit.empty());
  CHECK(real.FindNode("gpu01")->actions[0].reason == plans::ChangeReason::kIntent);
}

TEST_CASE("planner: node disruption is the max of its actions, actions in module order") {
  PlannerWorld w(1, 1, "1");
  ScalarModule late("zz_late", Disruption::kDrain, {"sysctl"});
  w.desired["gpu01"].desired.Mut()["sysctl"] = "on";
  w.desired["gpu01"].desired.Mut()["zz_late"] = 1;
  w.observed["gpu01"].facts["sysctl"] = {{"value", "off"}};
  w.observed["gpu01"].facts["zz_late"] = {{"value", 0}};
  auto in = w.Input();
  in.modules = {&late, &w.kernel, &w.sysctl};
  auto plan = plans::MakePlan(in);
  const auto* np = plan.FindNode("gpu01");
  REQUIRE(np->actions.size() == 3);
  CHECK(np->actions[0].action.module == "kernel");
  CHECK(np->actions[1].action.module == "sysctl");
  CHECK(np->actions[2].action.module == "zz_late");
  CHECK(np->disruption == Disruption::kReboot);
}

TEST_CASE("planner: health checks: on demand ones are judged only where a health run left facts") {
  // Every node pins kernel k1 (what it runs), a DCGM level and a GPU ECC limit. gather reads
  // gpu_health, never dcgm: no node is unreadable for want of dcgm facts.
  PlannerWorld w(3, 3, "1");
  const modules::Module* gpu_health = modules::FindModule("gpu_health");
  const modules::Module* dcgm = modules::FindModule("dcgm");
  REQUIRE(gpu_health);
  REQUIRE(dcgm);
  auto gpus = [](long long ecc) {
    return json{{"nvml", "ok"}, {"gpu_count", 1}, {"xids", json::array()}, {"xid_counts", json::object()},
                {"gpus", {{{"index", 0}, {"bus_id", "00000000:18:00.0"}, {"ecc_enabled", true},
                           {"uncorrected_volatile", ecc}, {"uncorrected_aggregate", ecc},
                           {"retired_pages_pending", nullptr}, {"remapped_rows_pending", false},
                           {"remapped_rows_failure", false}, {"throttle_mask", "0x0000000000000001"},
                           {"throttle_reasons", {"gpu_idle"}}}}}};
  };
  for (auto& [name, nd] : w.desired) {
    nd.desired.Mut()["kernel"] = "k1";
    nd.desired.Mut()["health"] = {{"dcgm", {{"level", 1}}}, {"gpu_health", {{"max_uncorrected_ecc", 0}}}};
    w.observed[name].facts["gpu_health"] = gpus(name == "gpu02" ? 2 : 0);
  }
  for (auto& [name, nd] : w.desired)
    nd.origins = inventory::OriginMap{{"/kernel", {"stacks/s.yaml", 1, 9}},
                                      {"/health/gpu_health/max_uncorrected_ecc", {"stacks/s.yaml", 4, 30}}};
  auto in = w.Input();
  in.modules = {&w.kernel, gpu_health, dcgm};
  auto plan = plans::MakePlan(in);
  CHECK(plan.complete);
  CHECK(plan.unreadable.empty());
  // A failed check is a finding, not a change: gpu02 has nothing to apply, so it is in sync,
  // in no batch, and the plan has no changes for --detailed-exitcode to count.
  CHECK(plan.in_sync == std::vector<std::string>{"gpu01", "gpu02", "gpu03"});
  CHECK(plan.nodes.empty());
  CHECK(plan.batches.empty());
  CHECK_FALSE(plan.HasChanges());
  REQUIRE(plan.health.size() == 1);
  const plans::NodeFindings& h = plan.health[0];
  CHECK(h.node == "gpu02");
  CHECK(h.Unhealthy());
  REQUIRE(h.findings.size() == 1);
  const modules::CheckResult& c = h.findings[0].check;
  CHECK(c.id == "gpu_health.gpu0.ecc");
  CHECK(c.subject == "GPU 0");                  // which GPU...
  CHECK(c.measured == 2);                       // ...what was measured...
  CHECK(c.threshold == json{{"max", 0}});       // ...against what is allowed
  CHECK(c.status == modules::CheckStatus::kFail);
  CHECK(h.findings[0].origin.ToString() == "stacks/s.yaml:4:30");   // where the threshold is pinned
  CHECK(plan.FindHealth("gpu01") == nullptr);

  // With a real change as well: the rollout's `unhealthy` says. skip (the default): shown with
  // its changes, in no batch, so apply leaves it.
  w.observed["gpu02"].facts["kernel"] = {{"value", "k0"}};
  w.observed["gpu03"].facts["kernel"] = {{"value", "k0"}};
  in = w.Input();
  in.modules = {&w.kernel, gpu_health, dcgm};
  auto mixed = plans::MakePlan(in);
  REQUIRE(mixed.FindNode("gpu02") != nullptr);
  CHECK(mixed.FindNode("gpu02")->skipped_unhealthy);
  CHECK_FALSE(mixed.FindNode("gpu03")->skipped_unhealthy);
  CHECK(mixed.FindNode("gpu02")->actions.size() == 1);   // the kernel, not the check
  auto batched = [](const plans::Plan& p, const std::string& n) {
    for (const auto& b : p.batches)
      if (std::find(b.nodes.begin(), b.nodes.end(), n) != b.nodes.end()) return true;
    return false;
  };
  CHECK_FALSE(batched(mixed, "gpu02"));
  CHECK(batched(mixed, "gpu03"));
  CHECK(mixed.rollouts.count("roll"));
  CHECK(mixed.HasApplicable());
  CHECK(plans::CheckPlan(mixed).items().empty());
  // change: rolled with the others, judged after its change.
  w.cluster.rollouts["roll"].unhealthy = inventory::RolloutPolicy::Unhealthy::kChange;
  in = w.Input();
  in.modules = {&w.kernel, gpu_health, dcgm};
  auto rolled = plans::MakePlan(in);
  REQUIRE(rolled.FindNode("gpu02") != nullptr);
  CHECK_FALSE(rolled.FindNode("gpu02")->skipped_unhealthy);
  CHECK(batched(rolled, "gpu02"));
  CHECK(rolled.health.size() == 1);
  w.cluster.rollouts["roll"].unhealthy = inventory::RolloutPolicy::Unhealthy::kSkip;
  w.observed["gpu02"].facts["kernel"] = {{"value", "k1"}};
  w.observed["gpu03"].facts["kernel"] = {{"value", "k1"}};

  // Where a health run left DCGM facts, they are judged like any other.
  w.observed["gpu03"].facts["dcgm"] = {
      {"present", true}, {"host_engine", "ok"}, {"layout", "dcgm3"}, {"dcgm_version", "3.3.5"},
      {"driver_version", nullptr}, {"runtime_error", nullptr}, {"gpus", nullptr},
      {"counts", {{"pass", 0}, {"fail", 1}, {"warn", 0}, {"skip", 0}, {"not-run", 0}}},
      {"failures", json::array()},
      {"tests", {{{"category", "Hardware"}, {"name", "GPU Memory"}, {"status", "fail"},
                  {"results", {{{"gpu", 0}, {"status", "fail"}, {"info", json::array()},
                                {"warnings", {{{"message", "GPU 0 had uncorrectable memory errors."}, {"error_id", 80}}}}}}}}}}};
  in = w.Input();
  in.modules = {&w.kernel, gpu_health, dcgm};
  plan = plans::MakePlan(in);
  CHECK(plan.FindNode("gpu03") == nullptr);
  REQUIRE(plan.FindHealth("gpu03") != nullptr);
  CHECK(plan.FindHealth("gpu03")->findings.at(0).check.id == "dcgm.gpu_memory.gpu0");
  CHECK(plan.FindHealth("gpu03")->findings.at(0).check.subject == "GPU 0");
}

TEST_CASE("planner: the facts digest leaves out health measurements, which move under load") {
  std::map<std::string, Result<modules::Facts>> a, b;
  a.emplace("kernel", modules::Facts{{"release", "5.15.0-119-generic"}});
  b = a;
  a.emplace("gpu_health", modules::Facts{{"gpus", {{{"throttle_reasons", {"gpu_idle"}}}}}});
  b.emplace("gpu_health", modules::Facts{{"gpus", {{{"throttle_reasons", {"sw_power_cap"}}}}}});
  a.emplace("ib_health", modules::Facts{{"ports", json::array()}});
  CHECK(plans::FactsDigest(a) == plans::FactsDigest(b));
  b.erase("kernel");
  b.emplace("kernel", modules::Facts{{"release", "6.8.0-45-generic"}});
  CHECK(plans::FactsDigest(a) != plans::FactsDigest(b));
}

TEST_CASE("plan file round-trips and its digest detects tampering") {
  PlannerWorld w(5, 5, "2");
  auto plan = plans::MakePlan(w.Input());
  plans::SealPlan(plan);
  CHECK(plan.digest.rfind("sha256:", 0) == 0);
  auto back = plans::PlanFromJson(plans::PlanToJson(plan));
  REQUIRE(back.ok());
  CHECK(plans::VerifyPlanDigest(*back).ok());
  CHECK(plans::PlanToJson(*back) == plans::PlanToJson(plan));
  auto j = plans::PlanToJson(plan);
  j["nodes"][0]["actions"][0]["after"] = "k3";   // someone edits the file
  auto edited = plans::PlanFromJson(j);
  REQUIRE(edited.ok());
  auto st = plans::VerifyPlanDigest(*edited);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == "plan.tampered");
}

TEST_CASE("plan file: version 3 carries the health findings, the skipped node and when the facts were read") {
  PlannerWorld w(3, 3, "1");
  const modules::Module* gpu_health = modules::FindModule("gpu_health");
  REQUIRE(gpu_health);
  for (auto& [name, nd] : w.desired) nd.desired.Mut()["health"] = {{"gpu_health", {{"max_uncorrected_ecc", 0}}}};
  for (auto& [name, o] : w.observed)
    o.facts["gpu_health"] = {{"nvml", "ok"}, {"gpu_count", 1}, {"xids", json::array()},
                             {"gpus", {{{"index", 3}, {"uncorrected_volatile", name == "gpu02" ? 5 : 0}}}}};
  auto in = w.Input();
  in.modules = {&w.kernel, gpu_health};
  auto plan = plans::MakePlan(in);
  plan.gathered_at = "2026-11-28T23:00:00.000Z";
  REQUIRE(plan.FindNode("gpu02") != nullptr);
  REQUIRE(plan.FindNode("gpu02")->skipped_unhealthy);
  const std::string text = plans::SealPlanToFile(plan);
  const json j = json::parse(text);
  CHECK(j["format_version"] == 3);
  CHECK(j["gathered_at"] == "2026-11-28T23:00:00.000Z");
  CHECK(j["rollouts"]["roll"]["unhealthy"] == "skip");
  REQUIRE(j["health"].size() == 1);
  CHECK(j["health"][0]["node"] == "gpu02");
  CHECK(j["health"][0]["findings"][0]["subject"] == "GPU 3");
  CHECK(j["health"][0]["findings"][0]["measured"] == 5);
  for (const auto& n : j["nodes"]) {
    CHECK(n["skipped_unhealthy"] == (n["node"] == "gpu02"));
    for (const auto& a : n["actions"]) CHECK(a["module"] != "gpu_health");   // never an action
  }
  auto back = plans::PlanFromJson(j);   // schema-checked
  REQUIRE_MESSAGE(back.ok(), back.error().message);
  CHECK(plans::VerifyPlanDigest(*back).ok());
  CHECK(back->gathered_at == plan.gathered_at);
  CHECK(back->FindNode("gpu02")->skipped_unhealthy);
  REQUIRE(back->FindHealth("gpu02") != nullptr);
  CHECK(back->FindHealth("gpu02")->findings[0].check.ToJson() == plan.health[0].findings[0].check.ToJson());
  CHECK(plans::PlanToJson(*back) == j);
}

TEST_CASE("plan file: an older (version 2) plan's failed-check actions read as findings, its digest holds") {
  // What a plumb before version 3 wrote: gpu02 with a real change and a failed check (batched),
  // gpu03 with only a failed check (in no batch: apply refused such a file, "in 0 batches").
  PlannerWorld w(3, 3, "1");
  auto plan = plans::MakePlan(w.Input());
  plan.format_version = 2;
  plans::PlannedAction check;
  check.action.module = "gpu_health";
  check.action.id = "gpu_health.gpu3.ecc";
  check.action.key = "health.gpu_health";
  check.action.pointer = "/health/gpu_health";
  check.action.summary = "GPU uncorrected ECC errors failed on GPU 3: 2 uncorrected ECC errors since the driver loaded > 0";
  check.action.before = 2;
  check.action.after = json{{"max", 0}};
  check.action.params = {{"manual", true}, {"check", true}};
  plans::NodePlan* n2 = nullptr;
  for (auto& n : plan.nodes)
    if (n.node == "gpu02") n2 = &n;
  REQUIRE(n2 != nullptr);
  n2->actions.push_back(check);
  plans::NodePlan only = *n2;
  only.node = "gpu99";
  only.actions = {check};
  only.disruption = Disruption::kNone;
  plan.nodes.push_back(only);
  plans::SealPlan(plan);
  const json written = plans::PlanToJson(plan);
  REQUIRE(written["format_version"] == 2);
  CHECK_FALSE(written.contains("health"));

  auto read = plans::PlanFromJson(written);
  REQUIRE_MESSAGE(read.ok(), read.error().message);
  CHECK(plans::VerifyPlanDigest(*read).ok());
  CHECK(plans::PlanToJson(*read) == written);   // written back as it was read
  CHECK(read->format_version == 2);
  // The checks are findings now: gpu02 keeps its real change only; gpu99 has nothing to apply.
  REQUIRE(read->FindNode("gpu02") != nullptr);
  for (const auto& pa : read->FindNode("gpu02")->actions) CHECK(pa.action.module != "gpu_health");
  CHECK(read->FindNode("gpu99") == nullptr);
  CHECK(std::count(read->in_sync.begin(), read->in_sync.end(), "gpu99") == 1);
  REQUIRE(read->FindHealth("gpu02") != nullptr);
  REQUIRE(read->FindHealth("gpu99") != nullptr);
  const plans::Finding& f = read->FindHealth("gpu02")->findings.at(0);
  CHECK(f.check.measured == 2);
  CHECK(f.check.threshold == json{{"max", 0}});
  CHECK(f.check.message.find("GPU 3") != std::string::npos);
  // ... and the plan is a valid one (it was not: gpu99 was in no batch).
  CHECK(plans::CheckPlan(*read).items().empty());
  // Narrowed, it is a plan of this version.
  std::vector<std::string> left_out;
  auto narrowed = plans::LimitPlan(*read, {"gpu02"}, w.cluster, w.desired, {}, &left_out);
  CHECK(narrowed.format_version == plans::kPlanFormatVersion);
  CHECK(narrowed.read_body.is_null());
  CHECK(plans::VerifyPlanDigest(narrowed).ok());
  CHECK(plans::PlanFromJson(plans::PlanToJson(narrowed)).ok());
}

TEST_CASE("plan file of another format version is refused with a hint") {
  PlannerWorld w(1, 1, "1");
  auto j = plans::PlanToJson(plans::MakePlan(w.Input()));
  j["format_version"] = 99;
  auto r = plans::PlanFromJson(j);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "plan.version");
}
