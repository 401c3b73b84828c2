#pragma once
/// Checks on a plan as a value, before apply touches anything.
///   CheckPlan: the invariants plans/plan/plan.h states (structure only, no repo needed).
///   CheckPlanAgainstCommit: a plan file's digest proves the file was not changed since it was
///     sealed, not that it says what its commit says: a plan re-sealed after raising
///     max_unavailable or merging batches has a valid digest. Apply loads the commit the plan
///     names anyway; this re-derives from it the rollout policies and the constraints every
///     batch must meet, and each change's desired value, and names every field that differs.
///     Applied at another commit than the plan's (`apply PLAN --ref main` after the merge), it
///     first checks CheckDesiredUnchanged; the rest is checked against the commit applied.
///   CheckDesiredUnchanged: every planned node wants the same at the commit applied as at the
///     plan's (their desired-state digests, plans/plan/desired_record.h), whatever the commit.
///   SelectPlanNodes / LimitPlan: `apply PLAN --limit`: the plan's nodes a pattern names, and the
///     plan narrowed to them with its batches formed again under the same policies.
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "inventory/file_source.h"
#include "inventory/model.h"
#include "modules/drain/drainer.h"
#include "plans/plan/plan.h"
#include "plans/plan/planner.h"
#include "schemas/diagnostics.h"
#include "schemas/result.h"

namespace plumb::plans {

Diagnostics CheckPlan(const Plan& plan);

/// `live`: the scheduler's view now. A node the plan says was already out costs no budget in a
/// batch only when `live` shows it out too (the flag is the plan's word; a re-sealed plan could
/// set it everywhere); null: no node is taken as already out. `cluster` and `desired` are the
/// commit applied (cluster.source.commit; when it is not the plan's, CheckDesiredUnchanged
/// runs too, and `files`, that commit's tree, lets it name the files that changed).
Diagnostics CheckPlanAgainstCommit(const Plan& plan, const inventory::Cluster& cluster,
                                   const DesiredByNode& desired,
                                   const std::map<std::string, modules::SchedulerNode>* live,
                                   const inventory::FileSource* files = nullptr);

/// Errors (code "plan.desired-changed", or "plan.commit-moved" for a plan that records no
/// desired state) naming each planned node whose desired-state image at `cluster`'s commit
/// differs from the plan's, with the keys that differ and the files that changed; nodes with
/// the same difference are named once, as a host list. Empty when every planned node wants
/// the same at both commits.
Diagnostics CheckDesiredUnchanged(const Plan& plan, const inventory::Cluster& cluster,
                                  const DesiredByNode& desired,
                                  const inventory::FileSource* files_now = nullptr);

/// The plan's nodes (with changes) that `pattern` (inventory/node_pattern.h; @group through the
/// cluster) selects. A positive term that names no node of the plan is an error, naming it and
/// the plan's nodes: a typo never narrows an apply to a different set than meant.
Result<std::set<std::string>> SelectPlanNodes(const Plan& plan, const inventory::Cluster& cluster,
                                              std::string_view pattern);

/// `plan` with only the nodes in `keep` (changes, waived, blocking jobs), batches formed again
/// from them with the cluster's policies and the scheduler's view now, sealed. `left_out`
/// gets the plan's nodes not kept.
Plan LimitPlan(const Plan& plan, const std::set<std::string>& keep,
               const inventory::Cluster& cluster, const DesiredByNode& desired,
               const std::map<std::string, modules::SchedulerNode>& scheduler,
               std::vector<std::string>* left_out);

}  // namespace plumb::plans
