#include <doctest/doctest.h>

#include <algorithm>

#include <fmt/format.h>

#include "plans/report/drift.h"
#include "plans/report/report_fixture.h"

using namespace plumb;
using plans::report::DriftVerdict;
using nlohmann::json;

namespace {

const plans::report::DriftCheck& Check(const plans::report::DriftReport& r, const std::string& node,
                                       const std::string& key) {
  for (const auto& n : r.nodes)
    if (n.node == node)
      for (const auto& c : n.checks)
        if (c.key() == key) return c;
  FAIL("no check " << node << " " << key);
  throw 0;
}

}  // namespace

TEST_CASE("drift: one check per node x desired key, drift from the plan's actions") {
  testing::ReportWorld w;
  auto r = testing::WorldDriftReport(w);
  REQUIRE(r.nodes.size() == 4);
  CHECK(r.nodes[0].checks.size() == 4);   // kernel, nvidia.driver, 2 sysctls
  const auto& swap = Check(r, "gpu001", "sysctl.vm.swappiness");
  CHECK(swap.status == plumb::plans::report::DriftStatus::kDrift);
  CHECK(swap.observed == 60);
  CHECK(swap.desired() == 10);
  CHECK(swap.reason == plans::ChangeReason::kRepair);
  CHECK(swap.origin().ToString() == "stacks/h100.yaml:4:34");
  CHECK(Check(r, "gpu001", "kernel").status == plumb::plans::report::DriftStatus::kInSync);
  CHECK(Check(r, "gpu002", "nvidia.driver").reason == plans::ChangeReason::kIntent);
  CHECK(Check(r, "gpu002", "nvidia.driver").module() == "nvidia_driver");
  CHECK_FALSE(r.nodes[3].readable);
  CHECK(r.nodes[3].unreadable_reason == "timeout");
  CHECK(r.drifted_nodes == 2);
  CHECK(r.drift_keys == 3);
  CHECK(r.verdict == DriftVerdict::kDrift);
  CHECK(plans::report::DriftExitCode(r) == 2);
}

TEST_CASE("drift: exit codes follow error > drift > partial > in sync") {
  testing::ReportWorld w;
  SUBCASE("drift wins over unreadable nodes") { CHECK(plans::report::DriftExitCode(testing::WorldDriftReport(w)) == 2); }
  SUBCASE("unreadable and no drift is partial (3)") {
    w.plan.nodes.clear();
    w.plan.in_sync = {"gpu001", "gpu002", "gpu003"};
    auto r = testing::WorldDriftReport(w);
    CHECK(r.verdict == DriftVerdict::kPartial);
    CHECK(plans::report::DriftExitCode(r) == 1);
  }
  SUBCASE("all read and in sync is 0") {
    w.plan.nodes.clear();
    w.plan.unreadable.clear();
    w.plan.in_sync = {"gpu001", "gpu002", "gpu003", "gpu004"};
    auto r = testing::WorldDriftReport(w);
    CHECK(r.verdict == DriftVerdict::kInSync);
    CHECK(plans::report::DriftExitCode(r) == 0);
    CHECK(r.checks == 16);
  }
}

TEST_CASE("drift: a waiver turns matching drift into waived; fully waived is not drift") {
  testing::ReportWorld w;
  w.plan.nodes.pop_back();                  // only gpu001's sysctl drift left
  w.plan.unreadable.clear();
  w.plan.in_sync = {"gpu002", "gpu003", "gpu004"};
  w.AddWaiver("gpu00[1-2]", "sysctl.*", "2026-12-31");
  auto r = testing::WorldDriftReport(w);
  const auto& c = Check(r, "gpu001", "sysctl.vm.swappiness");
  CHECK(c.status == plumb::plans::report::DriftStatus::kWaived);
  REQUIRE(c.waiver);
  CHECK(c.waiver->owner == "alice");
  CHECK(r.waived_keys == 1);
  CHECK(r.drift_keys == 0);
  CHECK(r.verdict == DriftVerdict::kInSync);   // never 2 for nothing to do
  CHECK(plans::report::DriftExitCode(r) == 0);
}

TEST_CASE("drift: a waiver is good through its expiry day, then counts as drift and warns") {
  testing::ReportWorld w;
  w.AddWaiver("gpu[001-002]", "sysctl.vm.*", "2026-11-29");
  CHECK(Check(testing::WorldDriftReport(w, "2026-11-29"), "gpu001", "sysctl.vm.swappiness").status ==
        plumb::plans::report::DriftStatus::kWaived);
  auto r = testing::WorldDriftReport(w, "2026-11-30");
  const auto& c = Check(r, "gpu001", "sysctl.vm.swappiness");
  CHECK(c.status == plumb::plans::report::DriftStatus::kDrift);
  REQUIRE(c.waiver);
  CHECK(c.waiver->expired);
  REQUIRE(r.diags.WarningCount() == 1);
  CHECK(r.diags.items()[0].code == "drift.waiver-expired");
  CHECK(r.diags.items()[0].where.ToString() == "waivers.yaml:2:5");
  CHECK(r.verdict == DriftVerdict::kDrift);
}

TEST_CASE("drift: a waiver only covers the nodes and keys it names") {
  testing::ReportWorld w;
  w.AddWaiver("gpu002", "nvidia.*", "2099-01-01");
  auto r = testing::WorldDriftReport(w);
  CHECK(Check(r, "gpu001", "sysctl.vm.swappiness").status == plumb::plans::report::DriftStatus::kDrift);
  CHECK(Check(r, "gpu002", "sysctl.vm.swappiness").status == plumb::plans::report::DriftStatus::kDrift);
  CHECK(Check(r, "gpu002", "nvidia.driver").status == plumb::plans::report::DriftStatus::kWaived);
  inventory::Waiver hl;
  hl.nodes = "gpu[001-003,010]";
  CHECK(plans::report::WaiverCoversNode(hl, "gpu002"));
  CHECK(plans::report::WaiverCoversNode(hl, "gpu010"));
  CHECK_FALSE(plans::report::WaiverCoversNode(hl, "gpu004"));
}

TEST_CASE("drift: keys no module of the run owns are unchecked, never reported in sync") {
  testing::ReportWorld w;
  for (auto& [n, nd] : w.desired) nd.desired.Mut()["firmware"] = {{"BMC", "24.09.17"}};
  auto r = testing::WorldDriftReport(w);
  CHECK(Check(r, "gpu003", "firmware.BMC").status == plumb::plans::report::DriftStatus::kUnchecked);
  CHECK(Check(r, "gpu003", "kernel").status == plumb::plans::report::DriftStatus::kInSync);
}

TEST_CASE("drift: health findings are reported beside the drift, never as drift") {
  testing::ReportWorld w;
  for (auto& [n, nd] : w.desired)
    nd.desired.Mut()["health"] = {{"dcgm", {{"level", 2}}},
                                  {"gpu_health", {{"max_uncorrected_ecc", 0}, {"expected_gpus", 8}}}};
  // Two GPUs of gpu003 (in sync) failed a check, and one warned: findings of the node.
  plans::NodeFindings h{"gpu003", {}};
  for (int gpu : {3, 5}) {
    plans::Finding f;
    f.check = {.module = "gpu_health", .id = fmt::format("gpu_health.gpu{}.ecc", gpu),
               .name = "GPU uncorrected ECC errors", .subject = fmt::format("GPU {}", gpu),
               .status = modules::CheckStatus::kFail, .measured = 2, .threshold = {{"max", 0}},
               .message = "2 uncorrected ECC errors since the driver loaded > 0"};
    h.findings.push_back(f);
  }
  plans::Finding warn = h.findings[0];
  warn.check.id = "gpu_health.xid13.gpu0";
  warn.check.status = modules::CheckStatus::kWarn;
  h.findings.push_back(warn);
  w.plan.health = {h};
  plans::report::DriftInput in;
  in.plan = &w.plan;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.today = "2026-11-29";
  in.modules_run = {"kernel", "nvidia_driver", "sysctl", "gpu_health"};
  auto r = plans::report::MakeDriftReport(in);
  const auto& node = r.nodes[2];
  REQUIRE(node.node == "gpu003");
  REQUIRE(node.findings.size() == 3);
  CHECK(node.findings[1].check.subject == "GPU 5");
  CHECK(node.Unhealthy());
  CHECK(node.Count(plumb::plans::report::DriftStatus::kDrift) == 0);   // not drift...
  CHECK(r.drifted_nodes == 2);                                         // ...gpu001, gpu002 only
  CHECK(r.unhealthy_nodes == 1);
  CHECK(r.findings == 3);
  CHECK(r.verdict == DriftVerdict::kDrift);
  for (const auto& c : node.checks) {
    CHECK(c.key().find("health.dcgm") == std::string::npos);   // judged by a health run, not here
    CHECK(c.key() != "health.gpu_health");
  }
  CHECK(Check(r, "gpu003", "health.gpu_health.max_uncorrected_ecc").status == plumb::plans::report::DriftStatus::kInSync);
  // A report whose only news is a finding is in sync (exit 0): health is not drift.
  w.plan.nodes.clear();
  w.plan.in_sync = {"gpu001", "gpu002", "gpu003"};
  w.plan.unreadable.clear();
  auto only = plans::report::MakeDriftReport(in);
  CHECK(only.verdict == DriftVerdict::kInSync);
  CHECK(plans::report::DriftExitCode(only) == 0);
  CHECK(only.unhealthy_nodes == 1);
  // Recount keeps the health counts.
  plans::report::Recount(only);
  CHECK(only.unhealthy_nodes == 1);
  CHECK(only.findings == 3);
}

TEST_CASE("drift: every member of a key off its pin is a row of its own, named") {
  // 11 InfiniBand ports off their pin: 7 down, 4 at 100 Gb/s (a B300 capture, issue 33).
  testing::ReportWorld w;
  for (auto& [n, nd] : w.desired)
    nd.desired.Mut()["fabric"] = {{"infiniband", {{"state", "ACTIVE"}, {"rate_gbps", 400}}}};
  auto& actions = w.plan.nodes[0].actions;
  for (int i = 0; i < 11; ++i) {
    const bool down = i < 7;
    const std::string ca = fmt::format("mlx5_{}", i);
    auto pa = testing::MakeAction("infiniband", down ? "/fabric/infiniband/state" : "/fabric/infiniband/rate_gbps",
                                  down ? "fabric.infiniband.state" : "fabric.infiniband.rate_gbps",
                                  down ? json("Down") : json(100.0), down ? json("ACTIVE") : json(400),
                                  modules::Disruption::kDrain, plans::ChangeReason::kIntent, {});
    pa.action.id = fmt::format("infiniband.{}.1.{}", ca, down ? "state" : "rate_gbps");
    pa.action.params = {{"manual", true}, {"ca", ca}, {"port", 1}, {"member", ca + " port 1"}};
    actions.push_back(pa);
  }
  auto r = testing::WorldDriftReport(w);
  std::vector<std::string> rate, state;
  for (const auto& c : r.nodes[0].checks) {
    if (c.key() == "fabric.infiniband.rate_gbps" && c.status == plumb::plans::report::DriftStatus::kDrift) {
      rate.push_back(c.member);
      CHECK(c.observed == 100.0);
    }
    if (c.key() == "fabric.infiniband.state" && c.status == plumb::plans::report::DriftStatus::kDrift)
      state.push_back(c.member);
  }
  CHECK(rate == std::vector<std::string>{"mlx5_7 port 1", "mlx5_8 port 1", "mlx5_9 port 1", "mlx5_10 port 1"});
  CHECK(state.size() == 7);
  CHECK(state.front() == "mlx5_0 port 1");
  CHECK(state.back() == "mlx5_6 port 1");
  // A key's rows stay together, in the order the ports came.
  std::vector<std::string> keys;
  for (const auto& c : r.nodes[0].checks) keys.push_back(c.key());
  CHECK(std::is_sorted(keys.begin(), keys.end()));
  CHECK(r.drift_keys == (1 + 11) + 2);   // gpu001: its sysctl and 11 ports; gpu002: 2 keys
}

TEST_CASE("drift: a row whose values read the same says why it differs") {
  testing::ReportWorld w;
  auto pa = testing::MakeAction("nvidia_driver", "/nvidia/driver", "nvidia.driver", "550.90.07", "550.90.07",
                                modules::Disruption::kReboot, plans::ChangeReason::kRepair, {"stacks/h100.yaml", 2, 19});
  pa.action.params = {{"gaps", {"nvidia-driver-550 is not (fully) installed"}}};
  w.plan.nodes[0].actions.push_back(pa);
  auto r = testing::WorldDriftReport(w);
  const auto& c = Check(r, "gpu001", "nvidia.driver");
  CHECK(c.status == plumb::plans::report::DriftStatus::kDrift);
  CHECK(c.why == "nvidia-driver-550 is not (fully) installed");
  CHECK(Check(r, "gpu002", "nvidia.driver").why.empty());   // 535 -> 550 says it
}

TEST_CASE("drift: an action below a leaf or above several leaves marks each of them") {
  testing::ReportWorld w;
  for (auto& [n, nd] : w.desired)
    nd.desired.Mut()["services"] = {{"nvidia-fabricmanager", {{"enabled", true}, {"active", true}}}};
  w.plan.nodes[0].actions.push_back(testing::MakeAction(
      "services", "/services/nvidia-fabricmanager", "services.nvidia-fabricmanager",
      {{"enabled", false}, {"active", true}}, {{"enabled", true}, {"active", true}},
      modules::Disruption::kServiceRestart, plans::ChangeReason::kRepair, {}));
  auto r = testing::WorldDriftReport(w);
  const auto& e = Check(r, "gpu001", "services.nvidia-fabricmanager.enabled");
  CHECK(e.status == plumb::plans::report::DriftStatus::kDrift);
  CHECK(e.observed == false);
  CHECK(e.module() == "services");
}

TEST_CASE("drift: thousands of nodes sharing desired states: checked in parallel, joined in order") {
  // 3000 nodes on two shared desired states (as the loader makes them), enough for the report
  // to split the nodes into chunks checked on several threads.
  testing::ReportWorld w;
  w.desired.clear();
  w.cluster.nodes.clear();
  w.plan.nodes.clear();
  w.plan.in_sync.clear();
  w.plan.unreadable.clear();
  inventory::NodeDesired a, b;
  a.desired = nlohmann::json{{"kernel", "k1"}, {"sysctl", {{"vm.swappiness", 10}}}};
  a.origins = inventory::OriginMap{{"/kernel", {"stacks/a.yaml", 1, 9}},
                                   {"/sysctl/vm.swappiness", {"stacks/a.yaml", 2, 9}}};
  b.desired = nlohmann::json{{"kernel", "k2"}};
  b.origins = inventory::OriginMap{{"/kernel", {"stacks/b.yaml", 1, 9}}};
  int want_drift_nodes = 0, want_unreadable = 0, want_checks = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string name = fmt::format("n{:04}", i);
    inventory::Node n;
    n.name = name;
    w.cluster.nodes.push_back(n);
    inventory::NodeDesired nd = i % 2 ? b : a;
    nd.node = name;
    w.desired[name] = nd;
    if (i % 11 == 0) {
      w.plan.unreadable.push_back({name, "timeout"});
      ++want_unreadable;
    } else if (i % 7 == 0 && i % 2 == 0) {
      plans::NodePlan np;
      np.node = name;
      // Its own origin for the pin: only this node's check may show it.
      np.actions.push_back(testing::MakeAction("sysctl", "/sysctl/vm.swappiness",
                                               "sysctl.vm.swappiness", 60, 10,
                                               modules::Disruption::kNone,
                                               plans::ChangeReason::kRepair, {"node.yaml", 3, 3}));
      w.plan.nodes.push_back(np);
      ++want_drift_nodes;
      want_checks += 2;
    } else {
      w.plan.in_sync.push_back(name);
      want_checks += i % 2 ? 1 : 2;
    }
  }
  // An expired waiver matching only the last drifted node: its "counts again" must come back
  // from whichever chunk saw it.
  std::string last_drifted = w.plan.nodes.back().node;
  w.AddWaiver(last_drifted, "sysctl.*", "2026-01-01");
  auto r = testing::WorldDriftReport(w);
  REQUIRE(r.nodes.size() == 3000);
  for (size_t i = 0; i < r.nodes.size(); ++i) CHECK(r.nodes[i].node == fmt::format("n{:04}", i));
  CHECK(r.drifted_nodes == want_drift_nodes);
  CHECK(r.drift_keys == want_drift_nodes);
  CHECK(r.unreadable_nodes == want_unreadable);
  CHECK(r.checks == want_checks);
  const auto& drifted = Check(r, w.plan.nodes.front().node, "sysctl.vm.swappiness");
  CHECK(drifted.status == plumb::plans::report::DriftStatus::kDrift);
  CHECK(drifted.origin().ToString() == "node.yaml:3:3");
  CHECK(Check(r, "n0002", "sysctl.vm.swappiness").origin().ToString() == "stacks/a.yaml:2:9");
  CHECK(Check(r, "n0002", "sysctl.vm.swappiness").status == plumb::plans::report::DriftStatus::kInSync);
  CHECK(Check(r, "n0001", "kernel").desired() == "k2");
  CHECK(Check(r, last_drifted, "sysctl.vm.swappiness").waiver != nullptr);
  bool counts_again = false;
  for (const Diagnostic& d : r.diags.items())
    if (d.code == "drift.waiver-expired" &&
        d.message.find("counts again") != std::string::npos)
      counts_again = true;
  CHECK(counts_again);
}

TEST_CASE("drift: a difference the planner set aside under a waiver is reported waived") {
  testing::ReportWorld w;
  plans::WaivedChange c;
  c.change = testing::MakeAction("sysctl", "/sysctl/net.core.rmem_max", "sysctl.net.core.rmem_max",
                                 212992, 268435456, modules::Disruption::kNone,
                                 plans::ChangeReason::kRepair, {"stacks/h100.yaml", 4, 10});
  c.nodes = "gpu[003,005]";
  c.keys = "sysctl.net.core.*";
  c.reason = "vendor tuning";
  c.owner = "bob";
  c.expires = "2099-01-01";
  w.plan.waived.push_back({"gpu003", {c}});
  auto r = testing::WorldDriftReport(w);
  const plans::report::DriftNode* n3 = nullptr;
  for (const auto& n : r.nodes)
    if (n.node == "gpu003") n3 = &n;
  REQUIRE(n3);
  CHECK(n3->Count(plans::report::DriftStatus::kWaived) == 1);
  CHECK(n3->Count(plans::report::DriftStatus::kDrift) == 0);
  for (const auto& ck : n3->checks)
    if (ck.status == plans::report::DriftStatus::kWaived) {
      REQUIRE(ck.waiver);
      CHECK(ck.waiver->owner == "bob");
      CHECK(ck.observed == 212992);
    }
}

TEST_CASE("drift: every read node reports the commit its marker names, in sync or not") {
  testing::ReportWorld w;
  w.plan.markers = {{"gpu001", std::string(40, 'b')}, {"gpu003", std::string(40, 'e')}};
  auto r = testing::WorldDriftReport(w);
  for (const auto& n : r.nodes) {
    if (n.node == "gpu003") CHECK(n.marker_commit == std::string(40, 'e'));
    if (n.node == "gpu001") CHECK(n.marker_commit == std::string(40, 'b'));
  }
}

TEST_CASE("drift: Recount gives a report's own counts back, and follows nodes changed one by one") {
  testing::ReportWorld w;
  auto r = testing::WorldDriftReport(w);
  auto counts = [](const plans::report::DriftReport& x) {
    return std::vector<int>{x.drifted_nodes, x.drift_keys, x.waived_keys, x.unreadable_nodes,
                            x.checks, static_cast<int>(x.verdict)};
  };
  const auto made = counts(r);
  plans::report::Recount(r);
  CHECK(counts(r) == made);
  // gpu001 and gpu002 go unreadable (the watch replaces their verdicts): drift is gone, the
  // report is partial.
  for (auto& n : r.nodes)
    if (n.node == "gpu001" || n.node == "gpu002") {
      n.readable = false;
      n.checks.clear();
    }
  plans::report::Recount(r);
  CHECK(r.drift_keys == 0);
  CHECK(r.unreadable_nodes == 3);
  CHECK(r.verdict == DriftVerdict::kPartial);
}
