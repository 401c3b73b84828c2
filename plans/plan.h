#pragma once
/// The plan is a value (terraform's plans.Plan): computed by plans/planner from desired x
/// observed state, written to a versioned JSON file (plans/plan_json), and read back by apply.
/// Invariants, checked by plans::CheckPlan and the unit tests:
///   - every node in `batches` has a NodePlan with at least one action, or is only to be
///     returned to service (`return_to_service`: in sync, left drained by a failed run);
///   - each node appears in at most one batch; batches[0] is the canary batch when canary > 0;
///   - within a batch, the nodes that need a drain never exceed the batch's `budget`;
///   - unreadable nodes are in `unreadable`, never in `nodes` or `batches`, and make
///     `complete` false;
///   - every planned node's `desired_digest` (when set) keys an entry of `desired_states`
///     whose image hashes to it (plans/desired_record.h);
///   - `digest` is SHA-256 over the canonical JSON of everything else (plan_json.cc).
#include <map>
#include <string>
#include <vector>

#include "inventory/model.h"
#include "modules/module.h"
#include "schemas/diagnostics.h"

namespace plumb::plans {

/// 2: desired-state digests (desired_states, desired_files, nodes[].desired_digest). Version 1
/// plans (a run journaled by an older plumb) are still read; they apply at their own commit only.
inline constexpr int kPlanFormatVersion = 2;

/// Why a change is wanted. kRepair: the desired value is what it was at the commit recorded in
/// the node's marker, so the node drifted. kIntent: the desired value changed since (or the node
/// has no marker): this is new intent from a reviewed commit.
enum class ChangeReason { kIntent, kRepair };
const char* ChangeReasonName(ChangeReason r);

/// One action with the planner's context.
struct PlannedAction {
  modules::Action action;
  ChangeReason reason = ChangeReason::kIntent;
  Location origin;          ///< where the desired value was written (file:line)
};

/// Everything planned for one node, actions in module dependency order.
struct NodePlan {
  std::string node;
  std::string rollout;                 ///< rollout policy name
  std::vector<PlannedAction> actions;
  modules::Disruption disruption = modules::Disruption::kNone;   ///< max over actions
  std::string facts_digest;            ///< SHA-256 of observed facts, for the stale check
  /// The digest of the node's desired-state image at the plan's commit (plans/desired_record.h):
  /// apply at another commit accepts the node only if that commit's image hashes the same.
  /// "" in a version 1 plan.
  std::string desired_digest;
  std::string marker_commit;           ///< commit in the node's marker, "" if none
  bool already_unavailable = false;    ///< drained or down in the scheduler when planned
  bool admin_drained = false;          ///< drained by someone other than plumb
  /// Drained by another plumb run that has not finished with it ("plumb:<run>:<step>", not a
  /// failure): busy. apply leaves it alone and reports it.
  std::string held_by_run;
  /// Left drained by a failed step of an earlier run ("plumb:<run>:failed:<step>: <error>"):
  /// this plan takes it over and returns it to service once it converges.
  std::string left_by_run, left_at_step, left_reason;
  /// No change, but left drained by a failed run: verify, gate and return it to service.
  bool return_to_service = false;

  bool NeedsDrain() const {
    return return_to_service || disruption >= modules::Disruption::kDrain;
  }
  /// Every action is a failed health check (IsCheckAction): findings plan and drift show, with
  /// nothing to apply, so the node is in no batch and apply does not touch it.
  bool OnlyChecks() const;
};

/// A failed health check shown as an action (a Kind::kHealth module's Diff; params.check):
/// apply never carries it out - the node's health:checks step judges the node after its change.
bool IsCheckAction(const modules::Action& a);

/// A difference an unexpired waiver covers: shown, never changed.
struct WaivedChange {
  PlannedAction change;
  std::string nodes, keys, reason, owner, expires;   ///< the waiver, as written
  Location where;                                    ///< where the waiver is written
};

/// The waived differences of one node (which may have other changes, or none).
struct NodeWaived {
  std::string node;
  std::vector<WaivedChange> changes;
};

/// A node plumb did not plan for, and why.
struct UnreadableNode {
  std::string node;
  std::string reason;       ///< "refused", "timeout", "host key", "probe error: ..."
};

struct Batch {
  int index = 0;
  std::string rollout;
  bool canary = false;
  std::vector<std::string> nodes;
  std::vector<std::string> domains;   ///< failure domains the batch touches
  int budget = 0;                      ///< nodes this batch may take out
  int est_seconds = 0;
};

/// A node's scheduler-side facts at plan time, for the disruption summary.
struct BlockingJobs {
  std::string node;
  std::vector<std::string> jobs;
};

/// One desired-state image the plan's nodes share, and the repo files it came from.
struct DesiredState {
  nlohmann::json image;                ///< {"desired", "rollout", "waivers"}
  std::vector<std::string> files;      ///< repo paths, sorted
};

struct Plan {
  int format_version = kPlanFormatVersion;
  inventory::Source source;
  std::string cluster;
  std::string created_at;              ///< RFC 3339 UTC
  std::vector<NodePlan> nodes;         ///< nodes with at least one action, by name
  std::vector<std::string> in_sync;    ///< nodes read and found in sync (waived differences aside)
  std::vector<NodeWaived> waived;      ///< by node: differences waivers cover (never applied)
  /// The commit each read node's marker names (nodes in sync included), "" when none.
  std::map<std::string, std::string> markers;
  std::vector<UnreadableNode> unreadable;
  std::map<std::string, inventory::RolloutPolicy> rollouts;   ///< the policies used
  std::vector<Batch> batches;
  std::vector<BlockingJobs> blocking_jobs;
  /// The planned nodes' desired-state images, by digest (NodePlan::desired_digest).
  std::map<std::string, DesiredState> desired_states;
  /// SHA-256 ("sha256:<hex>") of each repo file an image came from, at the plan's commit.
  std::map<std::string, std::string> desired_files;
  int peak_unavailable = 0;            ///< max nodes out at once, counting those already out
  int est_seconds = 0;
  bool complete = true;
  /// Only these modules' changes were planned (`plumb bmc apply`: firmware, bios, power); empty:
  /// every module. Apply then verifies only their keys and writes no marker (a marker says the
  /// node is at the commit, which a part of it does not make true).
  std::vector<std::string> only_modules;
  Diagnostics diags;                   ///< planner findings (warnings, blocked budget...)
  std::string digest;

  bool HasChanges() const { return !nodes.empty(); }
  const NodePlan* FindNode(const std::string& name) const;
  const NodeWaived* FindWaived(const std::string& name) const;
};

}  // namespace plumb::plans
