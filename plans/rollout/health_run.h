#pragma once
/// Running a node's health checks: the Kind::kHealth modules its desired state pins (`health:`),
/// as one script in one SSH round trip - the cheap ones' probes (gpu_health, ib_health) and the
/// on-demand ones' check scripts at the node's level (dcgm diag, nccl all_reduce_perf) - each
/// module's section parsed by its own parser and judged by its own Checks. Used by the rollout's
/// health step, `plumb health` and `plumb acceptance`. Read-only: the checks load the GPUs and
/// the fabric, they change nothing.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "modules/check_result.h"
#include "modules/module.h"
#include "inventory/model.h"
#include "modules/transport/shell.h"
#include "plans/observe/gather.h"
#include "plans/rollout/apply_prepare.h"
#include "schemas/diagnostics.h"

namespace plumb::plans {

/// One node's health: every check that ran, and what kept a check from running.
struct NodeHealth {
  std::string node;
  bool reachable = true;                      ///< false: no session (the reason in `problems`)
  std::vector<std::string> modules;           ///< the health modules it pins, in registry order
  std::vector<modules::CheckResult> checks;   ///< in module order, each module's own order
  /// The script could not run, a section is missing or cut short, a parser refused its part:
  /// each is a failure of the node's health (a check that did not run has not passed).
  Diagnostics problems;
  double seconds = 0;                         ///< the round trip's wall time

  /// The worst of the checks; kFail when there are problems; kPass when nothing is pinned.
  modules::CheckStatus Verdict() const;
  /// The failed checks (and problems) as one line each, for a step's error and a drain reason:
  /// "dcgm: DCGM Memory (GPU 3): ...".
  std::vector<std::string> FailureLines() const;
  nlohmann::json ToJson() const;
  /// Back from ToJson's form (a kept result); nullopt when `j` is not that form.
  static std::optional<NodeHealth> FromJson(const nlohmann::json& j);
};

/// The health modules among `all` that `desired` (the node's merged desired state) pins.
std::vector<const modules::Module*> PinnedHealthModules(const nlohmann::json& desired,
                                                        const std::vector<const modules::Module*>& all);

/// Runs the pinned health modules' checks on `shell` (nothing to run: a NodeHealth with no
/// checks, no round trip). `timeout` bounds the round trip, raised to what the checks need
/// (the sum of their CheckTimeout and a minute). `nonce` empty: a fresh one. Never throws.
NodeHealth RunNodeHealth(const std::string& node, transport::Shell& shell,
                         const nlohmann::json& desired,
                         const std::vector<const modules::Module*>& all,
                         std::chrono::milliseconds timeout, const std::string& nonce = {});

/// One node to check: the node and its merged desired state (whose `health:` says what to run).
struct HealthTarget {
  const inventory::Node* node = nullptr;
  const nlohmann::json* desired = nullptr;
  /// Non-empty: why the on-demand checks (which load every GPU) must not run on this node now
  /// (BusyReason): they are reported as skipped with it; the cheap ones still run.
  std::string hold_on_demand;
};

/// Why on-demand checks must not run on `node` as the schedulers see it: "" when it runs no job
/// (or is out of service); "2 job(s) running: 1234 (alice: train), ..." otherwise; the
/// scheduler's error when it could not be read (a node nobody can vouch for is held too).
std::string BusyReason(const SchedulerView& view, const std::string& node);
/// Called as each node finishes (serialised): the node, how many are done, of how many.
using HealthProgress = std::function<void(const NodeHealth&, size_t done, size_t total)>;

/// RunNodeHealth on every target, `fanout` nodes at once, each over a session from `shells`
/// (opened for the node and closed after it). One NodeHealth per target, in the targets' order;
/// never stops at a failing node.
std::vector<NodeHealth> RunHealth(const std::vector<HealthTarget>& targets, ShellFactory& shells,
                                  const std::vector<const modules::Module*>& all, int fanout,
                                  std::chrono::milliseconds timeout,
                                  const HealthProgress& progress = {});

}  // namespace plumb::plans
