#pragma once
/// `plumb health`'s report: every checked node's verdict and checks, and its renderers (one per
/// --format; each a pure function of the report, unit-tested).
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "inventory/model.h"
#include "plans/observe/schedulers.h"
#include "plans/rollout/health_run.h"

namespace plumb::plans::report {

struct HealthReport {
  std::string cluster;
  std::string commit;             ///< the repo commit whose `health:` thresholds were used
  std::vector<NodeHealth> nodes;  ///< in selection order
  double wall_s = 0;

  int Passed() const;             ///< nodes whose verdict is pass (or skip: nothing failed)
  int Warned() const;
  int Failed() const;             ///< a failed check (the unreachable excluded)
  int Unreachable() const;
  int NotPinned() const;          ///< reachable nodes that pin no health module
};

/// Per node: its verdict, then each failed or warned check (name, subject, measured vs
/// threshold, message) and each problem; a closing count line.
std::string HealthToText(const HealthReport& r);
/// {"cluster", "commit", "wall_s", "summary": {"nodes", "passed", "warned", "failed",
///  "unreachable", "not_pinned"}, "nodes": [NodeHealth::ToJson()]}.
nlohmann::json HealthToJson(const HealthReport& r);
/// JUnit XML (validated against junit-10.xsd in the tests): a testsuite per node, a testcase
/// per check; a failed check is a <failure>, a skipped one <skipped>, an unreachable node one
/// <error> case.
std::string HealthToJunit(const HealthReport& r);
/// Prometheus text exposition (node_exporter's textfile collector): plumb_health_node_ok,
/// plumb_health_check (1 pass / 0 otherwise, per node x check) and plumb_health_value (each
/// numeric measurement).
std::string HealthToProm(const HealthReport& r, long long now_unix);

}  // namespace plumb::plans::report

namespace plumb::plans::report {

/// What `plumb health` checks: the selected nodes against their stacks' `health:` pins.
struct HealthCheckRequest {
  const inventory::Cluster* cluster = nullptr;
  const std::map<std::string, inventory::NodeDesired>* desired = nullptr;
  std::vector<const inventory::Node*> nodes;   ///< selected; those with no desired state are left out
  /// What the schedulers say now: the checks that load every GPU are held on a busy node.
  /// Null: --allow-busy (nothing held).
  const SchedulerView* busy = nullptr;
  std::vector<const modules::Module*> modules;
  int fanout = 16;
  std::chrono::seconds timeout{3600};
  HealthProgress progress;
};

/// Runs every selected node's pinned checks over `shells` into a report (wall_s is the caller's).
HealthReport CheckHealth(const HealthCheckRequest& r, ShellFactory& shells);

}  // namespace plumb::plans::report
