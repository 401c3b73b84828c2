#pragma once
/// The planner: a pure function of desired state, observed state and scheduler state.
/// No I/O, no clock (the caller passes `now`), so it is tested by tables.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/model.h"
#include "modules/drain/drainer.h"
#include "modules/module.h"
#include "modules/registry.h"
#include "plans/plan/plan.h"

namespace plumb::plans {

/// What the planner needs to know about one node's live state.
struct NodeFacts {
  bool readable = true;
  std::string unreadable_reason;                 ///< when !readable
  nlohmann::json facts = nlohmann::json::object();   ///< module name -> that module's facts
  /// module name -> why it was not read whole (its error, or its part errors: the facts it did
  /// read are still in `facts`); see modules::ModuleProblems. A pinned module here makes the
  /// node unreadable; an unpinned one is only warned about.
  std::map<std::string, std::string> module_errors;
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
  /// Count the stacks the schedulers show (Plan::stacks): the jobs that ask for one, and every
  /// node's scheduler view when `scheduler` holds only --limit's nodes (empty: `scheduler`).
  bool count_stacks = false;
  std::vector<modules::StackRequest> stack_requests;
  std::map<std::string, modules::SchedulerNode> stack_view;
  /// Desired state at older commits, for repair-vs-intent: commit SHA -> desired by node.
  std::map<std::string, const DesiredByNode*> previous;
  /// Asked (once per commit) for a marker commit not in `previous`; null = unknown, its
  /// changes are intent. Lets a caller load an older commit only when some node names it.
  std::function<const DesiredByNode*(const std::string& commit)> load_previous;
  /// The modules to diff with, in registry order.
  std::vector<const modules::Module*> modules;
  /// false: every module in `modules` is expected on every node (its facts missing on a node
  /// make that node unreadable). true: a module counts only if some node has facts (or a probe
  /// error) for it, as with a snapshot made without BMC reads; decided once all nodes are in.
  bool modules_from_facts = false;
  std::string now;   ///< RFC 3339, recorded as the plan's created_at
  /// Every module, for what the planner reads beyond `modules`' diffs (the commit plumb last
  /// applied: ModuleInfo::applied_commit_key).
  const modules::Registry* registry = &modules::DefaultRegistry();
};

/// Desired x observed -> the plan (batches, disruption, digest left empty: see plan_json).
Plan MakePlan(const PlannerInput& input);

/// One node planned but not yet in the plan (PlanBuilder::Evaluate): what Accept records.
struct EvaluatedNode {
  std::string node;
  bool in_scope = false;                    ///< false: not to be planned (limit, no desired state)
  std::vector<std::string> modules_seen;    ///< with facts or a probe error on this node
  std::optional<UnreadableNode> unreadable; ///< set: not planned for, and why
  NodePlan plan;
  std::vector<std::string> missing;         ///< wanted modules it had no facts for
  std::vector<WaivedChange> waived;
  std::vector<Finding> findings;            ///< failed and warned health checks
  std::vector<std::pair<std::string, std::string>> module_errors;   ///< module, error
  std::optional<BlockingJobs> blocking;
};

/// MakePlan one node at a time: each node's facts are diffed as they arrive and can be dropped
/// right after, so a 10,000-node run never holds every node's facts at once. MakePlan is this
/// builder over `input.observed`.
class PlanBuilder {
 public:
  /// `input.observed` is not read; nodes come through Add.
  explicit PlanBuilder(PlannerInput input);
  ~PlanBuilder();
  PlanBuilder(const PlanBuilder&) = delete;
  PlanBuilder& operator=(const PlanBuilder&) = delete;

  /// Plans one node. A node outside the planned set (limit / desired) is ignored; a node added
  /// twice keeps its first observation.
  void Add(const std::string& node, const NodeFacts& facts);
  /// Add in two halves, so nodes can be planned on several threads: Evaluate does the node's
  /// own work (its diffs) and may run concurrently with itself; Accept puts the result in the
  /// plan, on one thread, in the order nodes are to appear. Add is Accept(Evaluate(...)).
  EvaluatedNode Evaluate(const std::string& node, const NodeFacts& facts) const;
  void Accept(EvaluatedNode&& node);
  /// True when `node` was accepted already (a later observation of it is ignored).
  bool Added(const std::string& node) const;
  /// Names of the modules with facts or a probe error on any node added so far.
  const std::set<std::string>& ModulesSeen() const;
  /// Nodes never added are "not gathered"; then batches. Call once.
  Plan Finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// (Re)forms `plan.batches` (and rollouts, peak, estimate) from `plan.nodes`, each rollout
/// policy of `cluster` against its own scope in `desired`, counting the nodes `scheduler` shows
/// out. Used by the planner, and by apply when --limit narrows a saved plan.
void FormBatches(Plan& plan, const inventory::Cluster& cluster, const DesiredByNode& desired,
                 const std::map<std::string, modules::SchedulerNode>& scheduler);

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

/// The desired-state key an action changes, in user terms ("sysctl.net.core.rmem_max"): what
/// waivers match.
std::string ActionKey(const modules::Action& a);

/// Rough seconds a node with `d` takes (drain wait excluded), for the estimate.
int EstimateSeconds(modules::Disruption d);

}  // namespace plumb::plans
