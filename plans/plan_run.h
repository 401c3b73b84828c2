#pragma once
/// The read-only half of a run, shared by `plumb plan` and `plumb drift`: observed state (from
/// a gather or a recorded snapshot) + the scheduler's view + the desired state at the commits
/// the nodes' markers name -> MakePlan's input -> the plan. Side effects come in through the
/// arguments (a loader for older commits, an optional Drainer used only for Query), so this is
/// tested with fakes and the benchmark runs it on recorded facts.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "inventory/model.h"
#include "modules/drain/drainer.h"
#include "modules/module.h"
#include "plans/observed.h"
#include "plans/plan.h"
#include "plans/planner.h"
#include "schemas/diagnostics.h"
#include "schemas/result.h"

namespace plumb::plans {

/// Loads the desired state at a full commit SHA (the cmd layer wraps inventory::LoadCluster
/// with ref=commit). An error means "unknown commit" or "did not load": its changes are intent.
using DesiredLoader = std::function<Result<DesiredByNode>(const std::string& commit)>;

struct PlanRunInput {
  const inventory::Cluster* cluster = nullptr;
  const DesiredByNode* desired = nullptr;
  std::vector<std::string> limit;            ///< node names (already selected); empty = all
  const ObservedState* observed = nullptr;
  std::vector<const modules::Module*> modules;
  /// Read-only scheduler view (Query only). Null = not read (noted in the diagnostics).
  modules::Drainer* scheduler = nullptr;
  DesiredLoader load_at;                     ///< may be empty: every change is then intent
  std::string now;                           ///< RFC 3339 UTC
};

struct PlanRun {
  Plan plan;
  /// Desired state at each marker commit that loaded (kept alive for the plan's lifetime).
  std::map<std::string, DesiredByNode> previous;
  Diagnostics diags;   ///< run-level notes (scheduler not read, marker commit unknown...)
};

/// The distinct marker commits ("marker" module, key "commit") in `observed`, sorted.
std::set<std::string> MarkerCommits(const ObservedState& observed);

/// Observed + scheduler + previous desired -> the plan (not sealed: see SealPlan).
PlanRun RunPlan(const PlanRunInput& in);

}  // namespace plumb::plans
