#pragma once
/// The plan is a value (terraform's plans.Plan): computed by plans/planner from desired x
/// observed state, written to a versioned JSON file (plans/plan_json), and read back by apply.
/// Invariants, checked by plans::CheckPlan and the unit tests:
///   - every node in `batches` has a NodePlan with at least one action, or is only to be
///     returned to service (`return_to_service`: in sync, left drained by a failed run);
///   - every NodePlan is in exactly one batch, unless it is `skipped_unhealthy` (then in none);
///     batches[0] is the canary batch when canary > 0;
///   - health findings (failed or warned checks) are in `health`, never actions: a node whose
///     only findings are checks is in sync as far as changes go;
///   - within a batch, the nodes that need a drain never exceed the batch's `budget`;
///   - unreadable nodes are in `unreadable`, never in `nodes` or `batches`, and make
///     `complete` false;
///   - every planned node's `desired_digest` (when set) keys an entry of `desired_states`
///     whose image hashes to it (plans/plan/desired_record.h);
///   - `digest` is SHA-256 over the canonical JSON of everything else (plan_json.cc).
#include <map>
#include <string>
#include <vector>

#include "inventory/model.h"
#include "modules/check_result.h"
#include "modules/drain/stack_tag.h"
#include "modules/module.h"
#include "schemas/diagnostics.h"

namespace plumb::plans {

/// 2: desired-state digests (desired_states, desired_files, nodes[].desired_digest).
/// 3: health findings are a section of their own (`health`), never actions; a node with changes
///    and a failed check that its rollout skips is `skipped_unhealthy` (in no batch); the policy's
///    `unhealthy`; `gathered_at`, when the facts were read.
/// Versions 1 and 2 (a plan file or a run journaled by an older plumb) are still read: their
/// failed-check actions become findings, and the file's own JSON is kept to hash and write back
/// (plan_json.cc), so their digest holds. Version 1 applies at its own commit only.
inline constexpr int kPlanFormatVersion = 3;

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
  /// The digest of the node's desired-state image at the plan's commit (plans/plan/desired_record.h):
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
  /// It failed a health check (a finding in Plan::health) and its rollout policy says
  /// `unhealthy: skip`: shown with its changes, in no batch; apply leaves it as it is.
  bool skipped_unhealthy = false;

  bool NeedsDrain() const {
    return return_to_service || disruption >= modules::Disruption::kDrain;
  }
};

/// A health check a node failed or warned on: a Kind::kHealth module's check (gpu_health,
/// ib_health, and dcgm/nccl_bw where a health run left facts) against the stack's `health:`
/// thresholds. A finding, never a change: nothing applies it, it is in no batch, and it is not
/// among the changes `--detailed-exitcode` counts. Which GPU, port or link (`check.subject`),
/// what was measured against what is allowed, and the check's own words.
struct Finding {
  modules::CheckResult check;
  Location origin;   ///< where `health.<module>` is pinned
};

/// One node's findings, in module order.
struct NodeFindings {
  std::string node;
  std::vector<Finding> findings;
  /// Some check failed (a warning alone leaves a node healthy).
  bool Unhealthy() const;
};

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

/// One stack as the schedulers show it (modules/drain/stack_tag.h): the nodes showing it now,
/// the nodes showing it once this plan is applied, and, when it goes from some to none, the
/// jobs that ask for it: they would never run again.
struct StackCount {
  std::string stack;
  int now = 0;
  int after = 0;
  std::vector<modules::StackRequest> stranded;   ///< only when after == 0 < now
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
  /// When the facts were read (RFC 3339 UTC): the gather's time, or a snapshot's (--facts) own
  /// `gathered_at`; "" when not known (a version 1 or 2 plan, a snapshot that does not say).
  std::string gathered_at;
  std::vector<NodePlan> nodes;         ///< nodes with at least one action, by name
  std::vector<std::string> in_sync;    ///< nodes read and found in sync (waived differences aside)
  std::vector<NodeWaived> waived;      ///< by node: differences waivers cover (never applied)
  /// The commit each read node's marker names (nodes in sync included), "" when none.
  std::map<std::string, std::string> markers;
  std::vector<UnreadableNode> unreadable;
  /// By node: the health findings of every node read (in sync or not); none for a healthy node.
  std::vector<NodeFindings> health;
  std::map<std::string, inventory::RolloutPolicy> rollouts;   ///< the policies used
  std::vector<Batch> batches;
  std::vector<BlockingJobs> blocking_jobs;
  /// By stack name: what the schedulers show now and after. Only when a scheduler that shows
  /// stacks was read (plan, not drift; not a run of some modules only); the plan file carries it
  /// only then, so a plan without it reads and hashes as before.
  std::vector<StackCount> stacks;
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
  /// A version 1 or 2 plan as read (its digest aside): what its digest covers, hashed and
  /// written back as it is (never re-made from the fields above, which read it the new way).
  /// Null for a version 3 plan, and for a plan changed after reading (LimitPlan).
  nlohmann::json read_body;

  bool HasChanges() const { return !nodes.empty(); }
  /// Some planned node is for apply to touch: not every one is skipped_unhealthy.
  bool HasApplicable() const;
  const NodePlan* FindNode(const std::string& name) const;
  const NodeWaived* FindWaived(const std::string& name) const;
  const NodeFindings* FindHealth(const std::string& name) const;
};

}  // namespace plumb::plans
