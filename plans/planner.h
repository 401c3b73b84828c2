#pragma once
/// The planner: a pure function of desired state, observed state and scheduler state.
/// No I/O, no clock (the caller passes `now`), so it is tested by tables.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/model.h"
#include "modules/drain/drainer.h"
#include "modules/module.h"
#include "plans/plan.h"

namespace plumb::plans {

/// What the planner needs to know about one node's live state.
struct NodeFacts {
  bool readable = true;
  std::string unreadable_reason;                 ///< when !readable
  nlohmann::json facts = nlohmann::json::object();   ///< module name -> that module's facts
  std::map<std::string, std::string> module_errors;  ///< module name -> why its probe failed
  std::string facts_digest;
};

using DesiredByNode = std::map<std::string, inventory::NodeDesired>;

struct PlannerInput {
  const inventory::Cluster* cluster = nullptr;
  const DesiredByNode* desired = nullptr;
  /// Nodes to consider (all of `desired` if empty), e.g. from --limit.
  std::vector<std::string> limit;
  std::map<std::string, NodeFacts> observed;
  /// The scheduler's view; a node missing here is taken as available.
  std::map<std::string, modules::SchedulerNode> scheduler;
  /// Desired state at older commits, for repair-vs-intent: commit SHA -> desired by node.
  std::map<std::string, const DesiredByNode*> previous;
  /// The modules to diff with, in registry order.
  std::vector<const modules::Module*> modules;
  std::string now;   ///< RFC 3339, recorded as the plan's created_at
};

/// Desired x observed -> the plan (batches, disruption, digest left empty: see plan_json).
Plan MakePlan(const PlannerInput& input);

/// `modules` sorted so each comes after everything in its After(); registry order otherwise.
/// A cycle or an unknown name is reported in `diags` and the input order kept.
std::vector<const modules::Module*> OrderModules(const std::vector<const modules::Module*>& modules,
                                                 Diagnostics& diags);

/// The batches for `nodes` (all under `policy`), given how many nodes of the policy's scope are
/// out already and how many nodes the scope has. Exposed for tests and the benchmark.
std::vector<Batch> MakeBatches(const std::vector<const NodePlan*>& nodes,
                               const inventory::Cluster& cluster,
                               const inventory::RolloutPolicy& policy, int scope_total,
                               int already_out, Diagnostics& diags);

/// Rough seconds a node with `d` takes (drain wait excluded), for the estimate.
int EstimateSeconds(modules::Disruption d);

}  // namespace plumb::plans
