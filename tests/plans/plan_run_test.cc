// RunPlan: observed snapshot + read-only scheduler + desired state at marker commits -> plan.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "plans/plan_run.h"
#include "plans/report/report_fixture.h"

using namespace plumb;
using nlohmann::json;

namespace {

// A module owning /sysctl: one action per differing key, disruption none.
class SysctlLike : public modules::Module {
 public:
  std::string_view Name() const override { return "sysctl"; }
  bool Wants(const json& d) const override { return d.contains("sysctl"); }
  std::vector<modules::Action> Diff(const json& desired, const modules::Facts& facts) const override {
    std::vector<modules::Action> out;
    for (auto it = desired["sysctl"].begin(); it != desired["sysctl"].end(); ++it) {
      json have = facts["values"].value(it.key(), json());
      if (have == it.value()) continue;
      modules::Action a;
      a.module = "sysctl";
      a.id = "sysctl.set." + it.key();
      a.key = "sysctl." + it.key();
      a.pointer = "/sysctl/" + it.key();
      a.before = have;
      a.after = it.value();
      out.push_back(a);
    }
    return out;
  }
};

// A Drainer whose only legal call is Query; Drain/Resume fail the test.
class QueryOnlyScheduler : public modules::Drainer {
 public:
  std::map<std::string, modules::SchedulerNode> nodes;
  int queries = 0;
  bool fail = false;
  std::string_view Name() const override { return "fake"; }
  Result<std::map<std::string, modules::SchedulerNode>> Query(const std::vector<std::string>&) override {
    ++queries;
    if (fail) return Diagnostic::Error("slurm.query", "sinfo: cannot reach slurmctld");
    return nodes;
  }
  Status Drain(const std::string&, const std::string&) override {
    FAIL("a read-only run drained a node");
    return OkStatus();
  }
  Status Resume(const std::string&) override {
    FAIL("a read-only run resumed a node");
    return OkStatus();
  }
};

plans::NodeObservation Obs(const std::string& name, int swappiness, const std::string& marker) {
  plans::NodeObservation o;
  o.node = name;
  o.reachable = true;
  o.facts.emplace("sysctl", Result<modules::Facts>(json{{"values", {{"vm.swappiness", swappiness},
                                                                     {"net.core.rmem_max", 268435456}}}}));
  if (!marker.empty())
    o.facts.emplace("marker", Result<modules::Facts>(json{{"commit", marker}, {"run", "r1"}}));
  o.facts_digest = plans::FactsDigest(o.facts);
  return o;
}

}  // namespace

TEST_CASE("plan run: repair vs intent from the desired state at each node's marker commit") {
  testing::ReportWorld w;
  const std::string old_commit(40, '1'), unknown(40, '2');
  // At old_commit swappiness was already 10 on every node; now gpu003 wants 20 (new intent).
  plans::DesiredByNode then = w.desired;
  w.desired["gpu003"].desired["sysctl"]["vm.swappiness"] = 20;
  plans::ObservedState obs;
  obs.nodes["gpu001"] = Obs("gpu001", 60, old_commit);   // drifted by hand: repair
  obs.nodes["gpu002"] = Obs("gpu002", 60, "");           // never applied: intent
  obs.nodes["gpu003"] = Obs("gpu003", 10, old_commit);   // repo changed: intent
  obs.nodes["gpu004"] = Obs("gpu004", 60, unknown);      // marker commit not loadable: intent
  SysctlLike sysctl;
  int loads = 0;
  plans::PlanRunInput in;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.observed = &obs;
  in.modules = {&sysctl};
  in.now = "2026-11-29T12:00:00Z";
  in.load_at = [&](const std::string& c) -> Result<plans::DesiredByNode> {
    ++loads;
    if (c == old_commit) return then;
    return Diagnostic::Error("git.ref", "unknown revision");
  };
  w.cluster.rollouts["roll"].name = "roll";
  plans::PlanRun run = plans::RunPlan(in);
  CHECK(loads == 2);   // each distinct marker commit once
  REQUIRE(run.plan.nodes.size() == 4);
  auto reason = [&](int i) { return run.plan.nodes[i].actions.at(0).reason; };
  CHECK(reason(0) == plans::ChangeReason::kRepair);
  CHECK(reason(1) == plans::ChangeReason::kIntent);
  CHECK(reason(2) == plans::ChangeReason::kIntent);
  CHECK(reason(3) == plans::ChangeReason::kIntent);
  CHECK(run.plan.nodes[0].marker_commit == old_commit);
  CHECK(run.plan.nodes[0].facts_digest == obs.nodes["gpu001"].facts_digest);
  REQUIRE(run.diags.WarningCount() == 1);
  CHECK(run.diags.items()[0].code == "plan.marker-commit");
}

TEST_CASE("plan run: the scheduler is only queried; its view counts nodes already out") {
  testing::ReportWorld w;
  w.cluster.rollouts["roll"].name = "roll";
  w.cluster.rollouts["roll"].max_unavailable_count = 2;
  plans::ObservedState obs;
  for (const char* n : {"gpu001", "gpu002", "gpu003", "gpu004"}) obs.nodes[n] = Obs(n, 60, "");
  SysctlLike sysctl;
  QueryOnlyScheduler sched;
  modules::SchedulerNode down;
  down.name = "gpu004";
  down.down = true;
  sched.nodes["gpu004"] = down;
  modules::SchedulerNode busy;
  busy.name = "gpu001";
  busy.running_jobs = 1;
  busy.jobs = {"77 (bob: sweep)"};
  sched.nodes["gpu001"] = busy;
  plans::PlanRunInput in;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.observed = &obs;
  in.modules = {&sysctl};
  in.scheduler = &sched;
  in.now = "2026-11-29T12:00:00Z";
  SUBCASE("read") {
    plans::PlanRun run = plans::RunPlan(in);
    CHECK(sched.queries == 1);
    CHECK(run.plan.nodes.size() == 4);
    CHECK(run.plan.nodes[3].already_unavailable);
    CHECK(run.diags.empty());
    CHECK(run.plan.blocking_jobs.empty());   // sysctl needs no drain, so jobs block nothing
  }
  SUBCASE("scheduler unreachable: planned anyway, and said") {
    sched.fail = true;
    plans::PlanRun run = plans::RunPlan(in);
    CHECK(run.plan.nodes.size() == 4);
    REQUIRE(run.diags.WarningCount() == 1);
    CHECK(run.diags.items()[0].message.find("scheduler state not read") != std::string::npos);
  }
}

TEST_CASE("plan run: marker commits are collected once each, empty ones ignored") {
  plans::ObservedState obs;
  obs.nodes["a"] = Obs("a", 1, "c1");
  obs.nodes["b"] = Obs("b", 1, "c1");
  obs.nodes["c"] = Obs("c", 1, "c2");
  obs.nodes["d"] = Obs("d", 1, "");
  CHECK(plans::MarkerCommits(obs) == std::set<std::string>{"c1", "c2"});
}
