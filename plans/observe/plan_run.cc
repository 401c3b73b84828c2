#include "plans/observe/plan_run.h"

#include <set>
#include <string_view>

#include <fmt/format.h>

#include "modules/registry.h"
#include "plans/observe/plan_schedulers.h"
#include "plans/plan/desired_record.h"

namespace plumb::plans {

PlanRunner::PlanRunner(const PlanRunInput& in) : in_(in), run_(std::make_unique<PlanRun>()) {
  in_.observed = nullptr;
  PlannerInput pin;
  pin.cluster = in_.cluster;
  pin.desired = in_.desired;
  pin.limit = in_.limit;
  pin.modules = in_.modules;
  pin.modules_from_facts = true;
  pin.now = in_.now;

  // Scheduler: read-only. Its failure does not stop a plan, but the plan says it is blind to
  // nodes already out (max_unavailable) and to jobs that would block a drain.
  if (in_.scheduler) {
    auto q = in_.scheduler->Query(in_.limit);
    if (q.ok()) {
      pin.scheduler = std::move(q.value());
      // A name the scheduler does not know plans fine and fails apply's drain: said now.
      if (auto w = NodesUnknownToScheduler(*in_.cluster, *in_.desired, in_.limit, pin.scheduler))
        run_->diags.Add(std::move(*w));
      ReadStacks(pin);
    } else {
      Diagnostic d = q.error();
      d.severity = Severity::kWarning;
      d.message = "scheduler state not read: " + d.message +
                  "; nodes already out and running jobs are not counted";
      run_->diags.Add(std::move(d));
    }
  }

  // Repair vs intent needs the desired state at each commit a node's marker names, loaded the
  // first time a node names it; the commit being planned is reused as it is.
  if (!in_.cluster->source.working_tree) pin.previous[in_.cluster->source.commit] = in_.desired;
  PlanRun* run = run_.get();
  DesiredLoader load_at = in_.load_at;
  auto find_loaded = in_.find_loaded;
  // Called under the builder's lock, from whichever planning thread meets the commit first:
  // its warning waits in a map so the plan lists them in one order, the commits'.
  std::map<std::string, Diagnostic>* unloaded = &unloaded_;
  pin.load_previous = [run, load_at, find_loaded, unloaded](const std::string& commit) -> const DesiredByNode* {
    if (find_loaded)
      if (const DesiredByNode* held = find_loaded(commit)) return held;
    if (!load_at) return nullptr;
    auto loaded = load_at(commit);
    if (!loaded.ok()) {
      unloaded->insert_or_assign(commit, Diagnostic::Warning(
          "plan.marker-commit",
          fmt::format("desired state at marker commit {} could not be loaded ({}); changes on "
                      "nodes at that commit are shown as intent",
                      commit.substr(0, 12), loaded.error().message),
          {}, {}, "fetch the commit into the cluster repo (a shallow clone lacks history)"));
      return nullptr;
    }
    return &(run->previous[commit] = std::move(loaded.value()));
  };
  builder_ = std::make_unique<PlanBuilder>(std::move(pin));
}

PlanRunner::~PlanRunner() = default;

void PlanRunner::ReadStacks(PlannerInput& pin) {
  // The stacks each scheduler shows, counted cluster-wide (a stack's last node may lie outside
  // --limit), and the jobs that ask for one. Not read: the plan says so and counts nothing.
  if (!in_.count_stacks || !in_.scheduler->ShowsStacks()) return;
  Result<std::map<std::string, modules::SchedulerNode>> all = pin.scheduler;
  if (!in_.limit.empty()) all = in_.scheduler->Query({});
  auto requests = in_.scheduler->StackRequests();
  if (!all || !requests) {
    Diagnostic d = !all ? all.error() : requests.error();
    d.severity = Severity::kWarning;
    d.message = "stacks not counted: " + d.message;
    run_->diags.Add(std::move(d));
    return;
  }
  pin.count_stacks = true;
  if (!in_.limit.empty()) pin.stack_view = std::move(*all);
  pin.stack_requests = std::move(*requests);
}

void PlanRunner::Add(NodeObservation&& node) {
  std::string name = node.node;
  builder_->Add(name, ToNodeFacts(std::move(node)));
}

void PlanRunner::Add(const std::string& node, const NodeFacts& facts) { builder_->Add(node, facts); }

void PlanRunner::Add(std::vector<NodeObservation>&& nodes) {
  // Each thread takes the next node when it is free (a snapshot's parsing threads share the
  // cores); its facts are converted, diffed and freed there, off the thread that accepts.
  std::vector<EvaluatedNode> done(nodes.size());
  // A node named again (here or in an earlier batch) keeps its first observation, as with Add
  // one at a time: the repeat is not planned at all (it could load an older commit for nothing).
  std::vector<bool> repeat(nodes.size());
  std::set<std::string_view> in_batch;
  for (size_t i = 0; i < nodes.size(); ++i)
    repeat[i] = builder_->Added(nodes[i].node) || !in_batch.insert(nodes[i].node).second;
  in_batch.clear();   // its views point into `nodes`, which the workers move from
  if (!pool_) pool_ = std::make_unique<WorkerPool>(Cores() - 1);
  pool_->ForEach(nodes.size(), [&](size_t i) {
    NodeObservation taken = std::move(nodes[i]);
    if (repeat[i]) return;   // done[i] stays out of scope: Accept ignores it
    const std::string name = taken.node;
    done[i] = builder_->Evaluate(name, ToNodeFacts(std::move(taken)));
  });
  nodes.clear();
  for (EvaluatedNode& e : done) builder_->Accept(std::move(e));
}

PlanRun PlanRunner::Finish() {
  run_->plan = builder_->Finish();
  for (auto& [commit, warning] : unloaded_) run_->diags.Add(std::move(warning));
  // What each planned node wants, so apply can accept the plan at the merge commit.
  RecordDesiredState(run_->plan, *in_.cluster, *in_.desired, in_.files);
  const std::set<std::string>& seen = builder_->ModulesSeen();
  for (const modules::Module* m : in_.modules)
    if (seen.empty() || seen.count(std::string(m->Name()))) run_->modules_run.push_back(m);
  PlanRun out = std::move(*run_);
  return out;
}

PlanRun RunPlan(const PlanRunInput& in) {
  PlanRunner runner(in);
  if (in.observed) {
    for (auto& [name, n] : in.observed->nodes) {
      // The facts move to the planner; names, reachability and digests stay with the caller.
      NodeObservation taken;
      taken.node = name;
      taken.reachable = n.reachable;
      taken.error = n.error;
      taken.facts_digest = n.facts_digest;
      taken.facts = std::move(n.facts);
      n.facts.clear();
      runner.Add(std::move(taken));
    }
  }
  return runner.Finish();
}

std::optional<Diagnostic> UncheckedKeysWarning(const DesiredByNode& desired,
                                               const std::vector<const modules::Module*>& ran,
                                               const modules::Registry& registry) {
  std::map<std::string, nlohmann::json> top_keys;   // each top-level key once, with a value
  for (const auto& [node, nd] : desired)
    for (auto it = nd.desired->begin(); it != nd.desired->end(); ++it)
      top_keys.emplace(it.key(), it.value());
  std::string keys;
  for (const auto& [key, value] : top_keys) {
    const nlohmann::json one = {{key, value}};
    bool owned = false;
    for (const modules::Module* m : ran)
      if (m->Wants(one)) {
        owned = true;
        break;
      }
    // Keys only on-demand checks read (health.dcgm, health.nccl_bw) are judged by a health
    // run, never by a gather's: not "unchecked" here.
    bool on_demand = false, gathered = false;
    for (const modules::Module* m : registry.All())
      if (m->Wants(one)) (m->Info().on_demand ? on_demand : gathered) = true;
    const bool on_demand_only = on_demand && !gathered;
    if (!owned && !on_demand_only) keys += (keys.empty() ? "" : ", ") + key;
  }
  if (keys.empty()) return std::nullopt;
  return Diagnostic::Warning(
      "plan.unchecked", fmt::format("not checked (no module of this run has facts for them): {}", keys),
      {}, {}, "firmware and bios need BMC reads; other keys need their module's probe");
}

}  // namespace plumb::plans
