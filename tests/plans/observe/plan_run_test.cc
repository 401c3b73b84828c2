// RunPlan: observed snapshot + read-only scheduler + desired state at marker commits -> plan.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "modules/registry.h"
#include "fakes/sysctl_like_module.h"
#include "plans/observe/plan_run.h"
#include "plans/plan/plan_json.h"
#include "plans/report/report_fixture.h"

using namespace plumb;
using nlohmann::json;

namespace {

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
  w.desired["gpu003"].desired.Mut()["sysctl"]["vm.swappiness"] = 20;
  plans::ObservedState obs;
  obs.nodes["gpu001"] = Obs("gpu001", 60, old_commit);   // drifted by hand: repair
  obs.nodes["gpu002"] = Obs("gpu002", 60, "");           // never applied: intent
  obs.nodes["gpu003"] = Obs("gpu003", 10, old_commit);   // repo changed: intent
  obs.nodes["gpu004"] = Obs("gpu004", 60, unknown);      // marker commit not loadable: intent
  fakes::SysctlLikeModule sysctl;
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

TEST_CASE("plan run: a caller's held desired states are asked first, so nothing loads twice; "
          "nodes can come as planner facts") {
  testing::ReportWorld w;
  const std::string old_commit(40, '1');
  plans::DesiredByNode then = w.desired;
  w.cluster.rollouts["roll"].name = "roll";
  fakes::SysctlLikeModule sysctl;
  int loads = 0, asked = 0;
  plans::PlanRunInput in;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.modules = {&sysctl};
  in.now = "2026-11-29T12:00:00Z";
  in.find_loaded = [&](const std::string& c) -> const plans::DesiredByNode* {
    ++asked;
    return c == old_commit ? &then : nullptr;
  };
  in.load_at = [&](const std::string&) -> Result<plans::DesiredByNode> {
    ++loads;
    return Diagnostic::Error("git.ref", "unknown revision");
  };
  for (int run = 0; run < 3; ++run) {   // the watch plans again and again
    plans::PlanRunner runner(in);
    runner.Add("gpu001", plans::ToNodeFacts(Obs("gpu001", 60, old_commit)));
    plans::PlanRun r = runner.Finish();
    REQUIRE(r.plan.nodes.size() == 1);
    CHECK(r.plan.nodes[0].actions.at(0).reason == plans::ChangeReason::kRepair);
    CHECK(r.previous.empty());   // nothing copied into the run
  }
  CHECK(asked == 3);
  CHECK(loads == 0);
}

TEST_CASE("plan run: the scheduler is only queried; its view counts nodes already out") {
  testing::ReportWorld w;
  w.cluster.rollouts["roll"].name = "roll";
  w.cluster.rollouts["roll"].max_unavailable_count = 2;
  plans::ObservedState obs;
  for (const char* n : {"gpu001", "gpu002", "gpu003", "gpu004"}) obs.nodes[n] = Obs(n, 60, "");
  fakes::SysctlLikeModule sysctl;
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
  for (const char* n : {"gpu002", "gpu003"}) sched.nodes[n].name = n;
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
  SUBCASE("a node the scheduler does not know: planned, and named (apply would fail its drain)") {
    sched.nodes.erase("gpu003");
    plans::PlanRun run = plans::RunPlan(in);
    CHECK(run.plan.nodes.size() == 4);
    REQUIRE(run.diags.WarningCount() == 1);
    CHECK(run.diags.items()[0].code == "plan.unknown-to-scheduler");
    CHECK(run.diags.items()[0].message.find("(slurm: gpu003)") != std::string::npos);
  }
  SUBCASE("scheduler unreachable: planned anyway, and said") {
    sched.fail = true;
    plans::PlanRun run = plans::RunPlan(in);
    CHECK(run.plan.nodes.size() == 4);
    REQUIRE(run.diags.WarningCount() == 1);
    CHECK(run.diags.items()[0].message.find("scheduler state not read") != std::string::npos);
  }
}

TEST_CASE("plan run: each marker commit is loaded once, when a node first names it; empty ones never") {
  testing::ReportWorld w;
  w.cluster.rollouts["roll"].name = "roll";
  fakes::SysctlLikeModule sysctl;
  std::vector<std::string> loaded;
  plans::PlanRunInput in;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.modules = {&sysctl};
  in.now = "2026-11-29T12:00:00Z";
  in.load_at = [&](const std::string& c) -> Result<plans::DesiredByNode> {
    loaded.push_back(c);
    return w.desired;
  };
  plans::PlanRunner runner(in);
  CHECK(loaded.empty());   // nothing is loaded before a node names a commit
  runner.Add(Obs("gpu001", 60, "c1"));
  CHECK(loaded == std::vector<std::string>{"c1"});
  runner.Add(Obs("gpu002", 60, "c1"));
  runner.Add(Obs("gpu003", 60, ""));
  CHECK(loaded == std::vector<std::string>{"c1"});
  // The commit being planned is the current desired state, never loaded again.
  runner.Add(Obs("gpu004", 60, w.cluster.source.commit));
  plans::PlanRun run = runner.Finish();
  CHECK(loaded == std::vector<std::string>{"c1"});
  CHECK(run.previous.count("c1") == 1);
  REQUIRE(run.plan.nodes.size() == 4);
  // gpu004's marker names the planned commit, whose swappiness is what is wanted now: repair.
  CHECK(run.plan.nodes[3].actions.at(0).reason == plans::ChangeReason::kRepair);
  CHECK(run.plan.nodes[2].actions.at(0).reason == plans::ChangeReason::kIntent);
}

namespace {

// A module owning /kernel: one action when the release differs.
class KernelLike : public modules::Module {
 public:
  const modules::ModuleInfo& Info() const override {
    static const modules::ModuleInfo kInfo = [] {
      modules::ModuleInfo i;
      i.name = "kernel";
      i.owns = {"/kernel"};
      return i;
    }();
    return kInfo;
  }
  std::vector<modules::Action> Diff(const json& desired, const modules::Facts& facts) const override {
    if (facts.value("release", "") == desired["kernel"]) return {};
    modules::Action a;
    a.module = "kernel";
    a.id = "kernel.install";
    a.key = "kernel";
    a.pointer = "/kernel";
    a.after = desired["kernel"];
    a.disruption = modules::Disruption::kReboot;
    return {a};
  }
};

std::vector<std::string> Names(const plans::Plan& p) {
  std::vector<std::string> out;
  for (const auto& n : p.nodes) out.push_back(n.node);
  return out;
}

}  // namespace

TEST_CASE("plan runner: nodes added one at a time, in any order, give RunPlan's plan") {
  testing::ReportWorld w;
  w.cluster.rollouts["roll"].name = "roll";
  const std::string old_commit(40, '1');
  plans::DesiredByNode then = w.desired;
  auto make_obs = [&] {
    plans::ObservedState obs;
    obs.nodes["gpu001"] = Obs("gpu001", 60, old_commit);
    obs.nodes["gpu002"] = Obs("gpu002", 10, "");
    obs.nodes["gpu003"] = Obs("gpu003", 60, "");
    obs.nodes["gpu004"].node = "gpu004";
    obs.nodes["gpu004"].error = Diagnostic::Error("ssh.refused", "connection refused");
    return obs;
  };
  fakes::SysctlLikeModule sysctl;
  int loads = 0;
  plans::PlanRunInput in;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.modules = {&sysctl};
  in.now = "2026-11-29T12:00:00Z";
  in.load_at = [&](const std::string&) -> Result<plans::DesiredByNode> { ++loads; return then; };

  plans::ObservedState whole = make_obs();
  in.observed = &whole;
  plans::PlanRun expected = plans::RunPlan(in);
  CHECK(whole.nodes.at("gpu001").facts.empty());   // RunPlan moved the facts out
  CHECK(whole.nodes.at("gpu001").facts_digest == Obs("gpu001", 60, old_commit).facts_digest);

  in.observed = nullptr;
  loads = 0;
  plans::PlanRunner runner(in);
  plans::ObservedState parts = make_obs();
  for (auto it = parts.nodes.rbegin(); it != parts.nodes.rend(); ++it)
    runner.Add(std::move(it->second));
  plans::PlanRun got = runner.Finish();
  CHECK(loads == 1);   // the marker commit, loaded when gpu001 named it
  CHECK(Names(got.plan) == std::vector<std::string>{"gpu001", "gpu003"});
  CHECK(Names(got.plan) == Names(expected.plan));
  CHECK(got.plan.in_sync == expected.plan.in_sync);
  REQUIRE(got.plan.unreadable.size() == 1);
  CHECK(got.plan.unreadable[0].node == "gpu004");
  CHECK(got.plan.unreadable[0].reason == "connection refused");
  CHECK(got.plan.nodes[0].actions.at(0).reason == plans::ChangeReason::kRepair);
  CHECK(got.plan.nodes[1].actions.at(0).reason == plans::ChangeReason::kIntent);
  CHECK(got.plan.batches.size() == expected.plan.batches.size());
  REQUIRE(got.modules_run.size() == 1);
  CHECK(got.modules_run[0] == &sysctl);

  // A node named twice keeps its first observation; a node outside the limit is ignored.
  in.limit = {"gpu001", "gpu002"};
  plans::PlanRunner limited(in);
  limited.Add(Obs("gpu002", 60, ""));
  limited.Add(Obs("gpu002", 10, ""));
  limited.Add(Obs("gpu003", 60, ""));
  plans::PlanRun l = limited.Finish();
  CHECK(Names(l.plan) == std::vector<std::string>{"gpu002"});
  REQUIRE(l.plan.unreadable.size() == 1);
  CHECK(l.plan.unreadable[0].node == "gpu001");
  CHECK(l.plan.unreadable[0].reason == "not gathered");
}

TEST_CASE("plan runner: a module some node has facts for is required on every node; one no node has is not checked") {
  testing::ReportWorld w;
  w.cluster.rollouts["roll"].name = "roll";
  fakes::SysctlLikeModule sysctl;
  KernelLike kernel;
  plans::PlanRunInput in;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.modules = {&kernel, &sysctl};
  in.now = "2026-11-29T12:00:00Z";
  in.limit = {"gpu001", "gpu002"};

  SUBCASE("kernel facts on one node only: the other was not fully read") {
    plans::PlanRunner runner(in);
    plans::NodeObservation a = Obs("gpu001", 10, "");   // in sync, but no kernel facts
    plans::NodeObservation b = Obs("gpu002", 60, "");
    b.facts.emplace("kernel", Result<modules::Facts>(json{{"release", "6.8.0-45-generic"}}));
    runner.Add(std::move(a));
    runner.Add(std::move(b));
    plans::PlanRun run = runner.Finish();
    CHECK(run.plan.in_sync.empty());
    REQUIRE(run.plan.unreadable.size() == 1);
    CHECK(run.plan.unreadable[0].node == "gpu001");
    CHECK(run.plan.unreadable[0].reason == "no facts from module kernel");
    CHECK(!run.plan.complete);
    REQUIRE(run.plan.nodes.size() == 1);
    CHECK(run.plan.nodes[0].actions.size() == 2);   // kernel and swappiness
    CHECK(run.modules_run.size() == 2);
  }
  SUBCASE("no node has kernel facts: kernel keys are not checked, the nodes are planned") {
    plans::PlanRunner runner(in);
    runner.Add(Obs("gpu001", 10, ""));
    runner.Add(Obs("gpu002", 60, ""));
    plans::PlanRun run = runner.Finish();
    CHECK(run.plan.complete);
    CHECK(run.plan.in_sync == std::vector<std::string>{"gpu001"});
    CHECK(Names(run.plan) == std::vector<std::string>{"gpu002"});
    REQUIRE(run.modules_run.size() == 1);
    CHECK(run.modules_run[0] == &sysctl);
  }
  SUBCASE("a kernel probe error on a node: that node is unreadable at once") {
    plans::PlanRunner runner(in);
    plans::NodeObservation a = Obs("gpu001", 10, "");
    a.facts.emplace("kernel", Result<modules::Facts>(Diagnostic::Error("probe.kernel", "uname: not found")));
    plans::NodeObservation b = Obs("gpu002", 60, "");
    b.facts.emplace("kernel", Result<modules::Facts>(json{{"release", "5.15.0-119-generic"}}));
    runner.Add(std::move(a));
    runner.Add(std::move(b));
    plans::PlanRun run = runner.Finish();
    REQUIRE(run.plan.unreadable.size() == 1);
    CHECK(run.plan.unreadable[0].reason.find("probe error: kernel") == 0);
    CHECK(Names(run.plan) == std::vector<std::string>{"gpu002"});
    CHECK(run.modules_run.size() == 2);
  }
}

TEST_CASE("plan run: keys only on-demand health checks read are not 'unchecked' after a gather") {
  testing::ReportWorld w;
  fakes::SysctlLikeModule sysctl;
  for (auto& [node, nd] : w.desired)
    nd.desired = json{{"sysctl", {{"vm.swappiness", 10}}},
                      {"health", {{"dcgm", {{"level", 1}}}, {"nccl_bw", {{"min_busbw_gbps", 350}}}}}};
  CHECK_FALSE(plans::UncheckedKeysWarning(w.desired, {&sysctl}).has_value());
  // A gathered health check pinned beside them still needs its module's facts.
  for (auto& [node, nd] : w.desired)
    nd.desired = json{{"health", {{"dcgm", {{"level", 1}}}, {"gpu_health", {{"expected_gpus", 8}}}}}};
  auto warning = plans::UncheckedKeysWarning(w.desired, {&sysctl});
  REQUIRE(warning.has_value());
  CHECK(warning->message.find("health") != std::string::npos);
  CHECK_FALSE(plans::UncheckedKeysWarning(w.desired, {modules::FindModule("gpu_health")}).has_value());
}

TEST_CASE("plan run: keys no module of the run checks are named, never passed over as in sync") {
  testing::ReportWorld w;   // every node pins kernel, nvidia.driver and sysctl
  fakes::SysctlLikeModule sysctl;
  auto warning = plans::UncheckedKeysWarning(w.desired, {&sysctl});
  REQUIRE(warning.has_value());
  CHECK(warning->code == "plan.unchecked");
  CHECK(warning->severity == Severity::kWarning);
  CHECK(warning->message.find("kernel, nvidia") != std::string::npos);
  CHECK(warning->message.find("sysctl") == std::string::npos);
  // With only sysctl pinned, the sysctl module leaves nothing unchecked.
  for (auto& [node, nd] : w.desired) nd.desired = json{{"sysctl", {{"vm.swappiness", 10}}}};
  CHECK_FALSE(plans::UncheckedKeysWarning(w.desired, {&sysctl}).has_value());
  // No module ran at all: every key is named.
  auto none = plans::UncheckedKeysWarning(w.desired, {});
  REQUIRE(none.has_value());
  CHECK(none->message.find("sysctl") != std::string::npos);
}

TEST_CASE("plan runner: nodes added in batches, planned on all cores, give the one-at-a-time plan") {
  // The snapshot path hands nodes over in batches and plans them on several threads; the plan
  // must be the one Add-ing them one by one gives, byte for byte, and each marker commit must
  // still load once. 400 nodes: repairs, intents, unknown commits, unreadable, twice-named.
  testing::ReportWorld w;
  w.cluster.rollouts["roll"].name = "roll";
  plans::DesiredByNode desired;
  const inventory::NodeDesired& model = w.desired.begin()->second;
  for (int i = 0; i < 400; ++i) desired[fmt::format("n{:03}", i)] = model;
  auto observations = [] {
    std::vector<plans::NodeObservation> out;
    for (int i = 0; i < 420; ++i) {
      const std::string name = fmt::format("n{:03}", i % 400);   // the last 20 named twice
      if (i % 37 == 5) {
        plans::NodeObservation down;
        down.node = name;
        down.error = Diagnostic::Error("ssh.refused", "connection refused");
        out.push_back(std::move(down));
        continue;
      }
      const std::string marker = i % 3 == 0 ? "" : fmt::format("{:040}", i % 5);
      out.push_back(Obs(name, i % 4 == 0 ? 60 : 10, marker));
    }
    out.push_back(Obs("not-in-repo", 10, ""));
    // A repeat whose marker no first observation names: not planned, so that commit never loads.
    out.push_back(Obs("n001", 10, fmt::format("{:040}", 9)));
    return out;
  };
  fakes::SysctlLikeModule sysctl;
  std::map<std::string, int> loads;
  plans::PlanRunInput in;
  in.cluster = &w.cluster;
  in.desired = &desired;
  in.modules = {&sysctl};
  in.now = "2026-11-29T12:00:00Z";
  in.load_at = [&](const std::string& c) -> Result<plans::DesiredByNode> {
    ++loads[c];   // called under the builder's lock
    if (c == fmt::format("{:040}", 4) || c == fmt::format("{:040}", 3))
      return Diagnostic::Error("git.ref", "unknown commit " + c.substr(38));
    return desired;
  };

  plans::PlanRunner one(in);
  for (plans::NodeObservation& o : observations()) one.Add(std::move(o));
  plans::PlanRun one_run = one.Finish();
  plans::Plan expected = one_run.plan;
  // The commits that did not load are warned about once each, in commit order, whichever
  // thread met them first.
  const nlohmann::json expected_diags = one_run.diags.ToJson();
  REQUIRE(expected_diags.size() == 2);
  CHECK(expected_diags[0].dump().find("unknown commit 03") != std::string::npos);
  CHECK(expected_diags[1].dump().find("unknown commit 04") != std::string::npos);
  plans::SealPlan(expected);
  const std::map<std::string, int> loads_one = loads;
  for (const auto& [commit, n] : loads_one) CHECK(n == 1);
  CHECK(loads_one.size() == 5);   // the markers 0-4, each once
  CHECK(loads_one.count(fmt::format("{:040}", 9)) == 0);

  for (size_t batch : {size_t{1}, size_t{7}, size_t{64}, size_t{1000}}) {
    CAPTURE(batch);
    loads.clear();
    plans::PlanRunner many(in);
    std::vector<plans::NodeObservation> all = observations();
    for (size_t at = 0; at < all.size(); at += batch) {
      std::vector<plans::NodeObservation> part;
      for (size_t i = at; i < std::min(all.size(), at + batch); ++i) part.push_back(std::move(all[i]));
      many.Add(std::move(part));
    }
    plans::PlanRun got_run = many.Finish();
    CHECK(got_run.diags.ToJson() == expected_diags);
    plans::Plan got = got_run.plan;
    plans::SealPlan(got);
    CHECK(loads == loads_one);
    CHECK(got.digest == expected.digest);
    CHECK(plans::PlanToJson(got).dump(2) == plans::PlanToJson(expected).dump(2));
  }
  CHECK(expected.unreadable.size() >= 10);
  CHECK(!expected.nodes.empty());
  CHECK(!expected.in_sync.empty());
}

namespace {
// A scheduler that shows stacks: every node on stack "old", one pending job asking for it.
class StackScheduler final : public QueryOnlyScheduler {
 public:
  std::vector<std::vector<std::string>> asked;
  bool ShowsStacks() const override { return true; }
  Result<std::map<std::string, modules::SchedulerNode>> Query(const std::vector<std::string>& want) override {
    asked.push_back(want);
    auto all = QueryOnlyScheduler::Query(want);
    std::map<std::string, modules::SchedulerNode> out;
    for (auto& [n, sn] : *all)
      if (want.empty() || std::find(want.begin(), want.end(), n) != want.end()) {
        sn.shows_stacks = true;
        out[n] = sn;
      }
    return out;
  }
  Result<std::vector<modules::StackRequest>> StackRequests() override {
    return std::vector<modules::StackRequest>{{"12", "alice", "train", "PENDING", "old"}};
  }
};
}  // namespace

TEST_CASE("plan run: stacks counted cluster-wide, even under --limit; a run of some modules counts none") {
  testing::ReportWorld w;
  for (auto& [n, nd] : w.desired) nd.stack = "new";
  StackScheduler sched;
  for (const auto& [n, nd] : w.desired) {
    modules::SchedulerNode sn;
    sn.name = n;
    sn.state = "idle";
    sn.stack_tag = {"old", "aaaaaaaaaaaa"};
    sched.nodes[n] = sn;
  }
  plans::ObservedState obs;
  obs.nodes["gpu001"] = Obs("gpu001", 60, "");
  fakes::SysctlLikeModule sysctl;
  plans::PlanRunInput in;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.observed = &obs;
  in.modules = {&sysctl};
  in.scheduler = &sched;
  in.limit = {"gpu001"};
  in.now = "2026-11-29T12:00:00Z";
  w.cluster.rollouts["roll"].name = "roll";
  plans::PlanRun run = plans::RunPlan(in);
  // The limit's view for the plan, then every node for the counts.
  REQUIRE(sched.asked.size() == 2);
  CHECK(sched.asked[0] == std::vector<std::string>{"gpu001"});
  CHECK(sched.asked[1].empty());
  REQUIRE(run.plan.stacks.size() == 2);
  CHECK(run.plan.stacks[0].stack == "new");
  CHECK(run.plan.stacks[0].after == 1);
  CHECK(run.plan.stacks[1].stack == "old");
  CHECK(run.plan.stacks[1].now == static_cast<int>(w.desired.size()));
  CHECK(run.plan.stacks[1].after == static_cast<int>(w.desired.size()) - 1);
  CHECK(run.plan.stacks[1].stranded.empty());   // other nodes keep "old"

  plans::ObservedState obs2;
  obs2.nodes["gpu001"] = Obs("gpu001", 60, "");
  in.observed = &obs2;
  in.count_stacks = false;
  CHECK(plans::RunPlan(in).plan.stacks.empty());
}
