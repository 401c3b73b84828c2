#include "plans/plan_run.h"

#include <fmt/format.h>

namespace plumb::plans {

std::set<std::string> MarkerCommits(const ObservedState& observed) {
  std::set<std::string> out;
  for (const auto& [name, o] : observed.nodes) {
    auto it = o.facts.find("marker");
    if (it == o.facts.end() || !it->second.ok()) continue;
    const auto& m = it->second.value();
    if (m.is_object() && m.contains("commit") && m["commit"].is_string() &&
        !m["commit"].get<std::string>().empty())
      out.insert(m["commit"].get<std::string>());
  }
  return out;
}

PlanRun RunPlan(const PlanRunInput& in) {
  PlanRun run;
  PlannerInput pin;
  pin.cluster = in.cluster;
  pin.desired = in.desired;
  pin.limit = in.limit;
  pin.observed = ToPlannerObserved(*in.observed);
  pin.modules = in.modules;
  pin.now = in.now;

  // Scheduler: read-only. Its failure does not stop a plan, but the plan says it is blind to
  // nodes already out (max_unavailable) and to jobs that would block a drain.
  if (in.scheduler) {
    std::vector<std::string> names = in.limit;
    auto q = in.scheduler->Query(names);
    if (q.ok()) {
      pin.scheduler = std::move(q.value());
    } else {
      Diagnostic d = q.error();
      d.severity = Severity::kWarning;
      d.message = "scheduler state not read: " + d.message +
                  "; nodes already out and running jobs are not counted";
      run.diags.Add(std::move(d));
    }
  }

  // Repair vs intent needs the desired state at each commit a node's marker names. Each
  // distinct commit is loaded once; the one being planned is reused as it is.
  for (const std::string& commit : MarkerCommits(*in.observed)) {
    if (commit == in.cluster->source.commit && !in.cluster->source.working_tree) {
      pin.previous[commit] = in.desired;
      continue;
    }
    if (!in.load_at) continue;
    auto loaded = in.load_at(commit);
    if (!loaded.ok()) {
      run.diags.Add(Diagnostic::Warning(
          "plan.marker-commit",
          fmt::format("desired state at marker commit {} could not be loaded ({}); changes on "
                      "nodes at that commit are shown as intent",
                      commit.substr(0, 12), loaded.error().message),
          {}, {}, "fetch the commit into the cluster repo (a shallow clone lacks history)"));
      continue;
    }
    run.previous[commit] = std::move(loaded.value());
  }
  for (const auto& [commit, d] : run.previous) pin.previous[commit] = &d;

  run.plan = MakePlan(pin);
  return run;
}

}  // namespace plumb::plans
