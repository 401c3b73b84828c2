#pragma once
/// The read-only half of a run, shared by `plumb plan` and `plumb drift`: observed state (from
/// a gather or a recorded snapshot) + the scheduler's view + the desired state at the commits
/// the nodes' markers name -> MakePlan's input -> the plan. Side effects come in through the
/// arguments (a loader for older commits, an optional Drainer used only for Query), so this is
/// tested with fakes and the benchmark runs it on recorded facts.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "inventory/file_source.h"
#include "inventory/model.h"
#include "modules/drain/drainer.h"
#include "modules/module.h"
#include "plans/core/parallel.h"
#include "plans/observe/observed.h"
#include "plans/plan/plan.h"
#include "plans/plan/planner.h"
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
  /// RunPlan only: the observation. RunPlan moves the facts out of it (a 10,000-node snapshot
  /// is most of the run's memory; a copy would double it): it is left with node names,
  /// reachability and digests only. PlanRunner ignores it (nodes come through Add).
  ObservedState* observed = nullptr;
  /// The modules plumb knows. A module is diffed only if some node has facts (or a probe
  /// error) for it: a snapshot made without BMC reads leaves firmware keys "not checked".
  std::vector<const modules::Module*> modules;
  /// Read-only scheduler view (Query only). Null = not read (noted in the diagnostics).
  modules::Drainer* scheduler = nullptr;
  /// Count the stacks the scheduler shows (Plan::stacks); false for a run of some modules
  /// only, which sets no stack tag.
  bool count_stacks = true;
  DesiredLoader load_at;                     ///< may be empty: every change is then intent
  /// The tree `cluster` was loaded from, for the plan's record of the files each node's desired
  /// state came from (plans/plan/desired_record.h); may be null (no file digests then).
  const inventory::FileSource* files = nullptr;
  /// Asked before `load_at` for a marker commit: the desired state there if the caller holds
  /// it (and keeps it alive past the run), else null. A long-lived caller (plumb watch, which
  /// plans every few seconds) keeps older commits this way instead of loading them per run.
  std::function<const DesiredByNode*(const std::string& commit)> find_loaded;
  std::string now;                           ///< RFC 3339 UTC
};

struct PlanRun {
  Plan plan;
  /// Desired state at each marker commit that loaded (kept alive for the plan's lifetime).
  std::map<std::string, DesiredByNode> previous;
  /// The modules some node had facts or a probe error for, in `modules` order: what this run
  /// checked. Every module when no node was read at all.
  std::vector<const modules::Module*> modules_run;
  Diagnostics diags;   ///< run-level notes (scheduler not read, marker commit unknown...)
};

/// RunPlan one node at a time: Add each observation as soon as it is read (a snapshot being
/// parsed, a gather's results), then Finish. Only one node's facts are alive at a time. The
/// scheduler is queried in the constructor; an older commit is loaded when a node's marker
/// first names it.
class PlanRunner {
 public:
  explicit PlanRunner(const PlanRunInput& in);
  ~PlanRunner();
  PlanRunner(const PlanRunner&) = delete;
  PlanRunner& operator=(const PlanRunner&) = delete;

  void Add(NodeObservation&& node);
  /// The same for several nodes, planned on all cores (each node's diffs are its own) and
  /// added in the order given.
  void Add(std::vector<NodeObservation>&& nodes);
  /// The same for a node already in the planner's form (ToNodeFacts), e.g. kept from an
  /// earlier observation.
  void Add(const std::string& node, const NodeFacts& facts);
  /// The plan (not sealed: see SealPlan). Call once.
  PlanRun Finish();

 private:
  PlanRunInput in_;
  std::unique_ptr<PlanRun> run_;   // stable address: the builder points into run_->previous
  std::unique_ptr<PlanBuilder> builder_;
  std::unique_ptr<WorkerPool> pool_;   // for Add(vector), made at its first call
  std::map<std::string, Diagnostic> unloaded_;   // marker commit -> why it did not load
  /// With a scheduler that shows stacks: the cluster-wide view and the jobs asking for a
  /// stack, into `pin` (or a warning that they could not be read).
  void ReadStacks(PlannerInput& pin);
};

/// Observed + scheduler + previous desired -> the plan (not sealed: see SealPlan).
PlanRun RunPlan(const PlanRunInput& in);

/// The top-level desired keys no module of `ran` checks (e.g. firmware and bios when the BMCs
/// were not read), as the warning plan and drift show, so "no changes" is never a silent "not
/// looked at"; nullopt when every key was checked.
/// `registry`: every module, to tell keys only on-demand checks read from keys nothing read.
std::optional<Diagnostic> UncheckedKeysWarning(
    const DesiredByNode& desired, const std::vector<const modules::Module*>& ran,
    const modules::Registry& registry = modules::DefaultRegistry());

}  // namespace plumb::plans
