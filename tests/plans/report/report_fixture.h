#pragma once
// A small hand-built world for the report tests: 4 nodes in 2 racks, a plan whose actions are
// the drift (built directly, so these tests do not depend on any module's diff).
#include <string>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "plans/core/command_output.h"
#include "plans/plan/plan.h"
#include "plans/plan/planner.h"
#include "plans/report/drift.h"

namespace plumb::testing {

inline plans::PlannedAction MakeAction(const std::string& module, const std::string& pointer,
                                       const std::string& key, nlohmann::json before,
                                       nlohmann::json after, modules::Disruption d,
                                       plans::ChangeReason reason, Location origin) {
  plans::PlannedAction pa;
  pa.action.module = module;
  pa.action.id = module + ".set";
  pa.action.key = key;
  pa.action.pointer = pointer;
  pa.action.before = std::move(before);
  pa.action.after = std::move(after);
  pa.action.summary = fmt::format("set {}", key);
  pa.action.disruption = d;
  pa.reason = reason;
  pa.origin = origin;
  return pa;
}

/// gpu_health findings: 2 uncorrected ECC errors on GPU 3 (a failure)...
inline plans::Finding EccFinding() {
  plans::Finding ecc;
  ecc.check = {.module = "gpu_health", .id = "gpu_health.gpu3.ecc", .name = "GPU uncorrected ECC errors",
               .subject = "GPU 3", .status = modules::CheckStatus::kFail, .measured = 2,
               .threshold = {{"max", 0}}, .message = "2 uncorrected ECC errors since the driver loaded > 0"};
  ecc.origin = {"stacks/h100.yaml", 9, 30};
  return ecc;
}

/// ...and XID 13 once on GPU 0 (a warning).
inline plans::Finding XidFinding() {
  plans::Finding xid = EccFinding();
  xid.check.id = "gpu_health.xid13.gpu0";
  xid.check.name = "GPU XID 13";
  xid.check.subject = "GPU 0";
  xid.check.status = modules::CheckStatus::kWarn;
  xid.check.measured = 1;
  xid.check.threshold = {{"forbidden", {48, 63}}};
  xid.check.message = "1 time since boot (not in forbid_xids: a warning)";
  return xid;
}

struct ReportWorld {
  inventory::Cluster cluster;
  plans::DesiredByNode desired;
  plans::Plan plan;

  ReportWorld() {
    cluster.name = "pod-a";
    cluster.source = {"cluster", "main", std::string(40, 'c'), false};
    for (int i = 1; i <= 4; ++i) {
      inventory::Node n;
      n.name = fmt::format("gpu{:03}", i);
      n.rack = i <= 2 ? "r01" : "r02";
      cluster.nodes.push_back(n);
      inventory::NodeDesired nd;
      nd.node = n.name;
      nd.stack = "h100";
      nd.rollout = "roll";
      nd.desired = {{"kernel", "5.15.0-119-generic"},
                    {"nvidia", {{"driver", "550.90.07"}}},
                    {"sysctl", {{"vm.swappiness", 10}, {"net.core.rmem_max", 268435456}}}};
      nd.origins = {{"/kernel", {"stacks/h100.yaml", 1, 9}},
                    {"/nvidia/driver", {"stacks/h100.yaml", 2, 19}},
                    {"/sysctl/vm.swappiness", {"stacks/h100.yaml", 4, 34}},
                    {"/sysctl/net.core.rmem_max", {"stacks/h100.yaml", 4, 10}}};
      desired[n.name] = nd;
    }
    plan.cluster = cluster.name;
    plan.source = cluster.source;
    plan.created_at = "2026-11-29T12:00:00Z";
    plans::NodePlan n1;
    n1.node = "gpu001";
    n1.rollout = "roll";
    n1.marker_commit = std::string(40, 'b');
    n1.actions.push_back(MakeAction("sysctl", "/sysctl/vm.swappiness", "sysctl.vm.swappiness", 60,
                                    10, modules::Disruption::kNone, plans::ChangeReason::kRepair,
                                    {"stacks/h100.yaml", 4, 34}));
    plans::NodePlan n2 = n1;
    n2.node = "gpu002";
    n2.actions.insert(n2.actions.begin(),
                      MakeAction("nvidia_driver", "/nvidia/driver", "nvidia.driver", "535.161.08",
                                 "550.90.07", modules::Disruption::kReboot,
                                 plans::ChangeReason::kIntent, {"stacks/h100.yaml", 2, 19}));
    n2.disruption = modules::Disruption::kReboot;
    plan.nodes = {n1, n2};
    plan.in_sync = {"gpu003"};
    plan.unreadable = {{"gpu004", "timeout"}};
    plan.complete = false;
  }

  /// What issue 33 asks a plan to show: gpu001's two InfiniBand ports off their pin (each
  /// named), its BIOS attributes (a row each) and a driver row whose values read the same (and
  /// why); gpu002 failed a GPU check and its rollout skips it; gpu003 (in sync) warned; the
  /// facts are a month old.
  void AddIssue33() {
    plan.gathered_at = "2026-10-29T12:00:00.000Z";
    auto& a1 = plan.nodes[0].actions;
    for (const char* ca : {"mlx5_0", "mlx5_3"}) {
      auto pa = MakeAction("infiniband", "/fabric/infiniband/rate_gbps", "fabric.infiniband.rate_gbps", 100.0, 400,
                           modules::Disruption::kDrain, plans::ChangeReason::kIntent, {"stacks/h100.yaml", 6, 40});
      pa.action.id = fmt::format("infiniband.{}.1.rate_gbps", ca);
      pa.action.params = {{"manual", true}, {"member", fmt::format("{} port 1", ca)}};
      a1.push_back(pa);
    }
    a1.push_back(MakeAction("bios", "/bios", "bios", {{"SriovGlobalEnable", "Disabled"}, {"WorkloadProfile", nullptr}},
                            {{"SriovGlobalEnable", "Enabled"}, {"WorkloadProfile", "HPC"}},
                            modules::Disruption::kReboot, plans::ChangeReason::kIntent, {"stacks/h100.yaml", 7, 7}));
    auto same = MakeAction("nvidia_driver", "/nvidia/driver", "nvidia.driver", "550.90.07", "550.90.07",
                           modules::Disruption::kReboot, plans::ChangeReason::kRepair, {"stacks/h100.yaml", 2, 19});
    same.action.params = {{"gaps", {"nvidia-driver-550 is not (fully) installed"}}};
    a1.push_back(same);
    plan.nodes[0].disruption = modules::Disruption::kReboot;
    plan.nodes[1].skipped_unhealthy = true;
    plan.health = {{"gpu002", {EccFinding()}}, {"gpu003", {XidFinding()}}};
  }

  void AddWaiver(const std::string& nodes, const std::string& keys, const std::string& expires) {
    inventory::Waiver w;
    w.nodes = nodes;
    w.keys = keys;
    w.reason = "tuning trial INC-1234";
    w.owner = "alice";
    w.expires = expires;
    w.where = {"waivers.yaml", 2, 5};
    cluster.waivers.push_back(w);
  }
};

/// The drift report of `w` (its plan, cluster and desired state) as of `today`, the modules the
/// world's actions come from counted as run.
inline plans::report::DriftReport WorldDriftReport(
    ReportWorld& w, const std::string& today = "2026-11-29",
    std::set<std::string> modules_run = {"kernel", "nvidia_driver", "sysctl"}) {
  plans::report::DriftInput in;
  in.plan = &w.plan;
  in.cluster = &w.cluster;
  in.desired = &w.desired;
  in.today = today;
  in.modules_run = std::move(modules_run);
  return plans::report::MakeDriftReport(in);
}

/// What a command outcome prints on its stream (its report, styled or not).
inline std::string RenderedOutcome(const plans::CommandOutcome& o) {
  std::ostringstream out;
  o.render(out);
  return out.str();
}

}  // namespace plumb::testing
