#include "plans/rollout/apply_prepare.h"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "inventory/hostlist.h"
#include "plans/plan/drain_reason.h"
#include "plans/plan/plan_json.h"
#include "plans/rollout/recover.h"
#include "plans/store/apply_lock.h"

namespace plumb::plans {

Result<ResumeChoice> ChooseRunToResume(Journal& journal, const std::string& requested,
                                       bool have_plan_file, const std::string& journal_name) {
  ResumeChoice c;
  c.run_id = requested;
  if (c.run_id.empty()) {
    auto runs = journal.ListRuns(50);
    if (!runs) return runs.error();
    for (const RunRecord& r : *runs)
      if (r.outcome != RunState::kDone && r.outcome != RunState::kFailed) {
        c.run_id = r.id;
        break;
      }
    if (c.run_id.empty())
      return Diagnostic::Error("apply.resume", fmt::format("nothing to resume: every run in {} has "
                                                           "finished", journal_name));
  }
  auto rec = journal.GetRun(c.run_id);
  if (!rec) return rec.error();
  if (!rec->has_value()) {
    if (!have_plan_file)
      return Diagnostic::Error(
          "apply.resume",
          fmt::format("run {} is not in {}; give its plan file too (plumb apply --resume {} "
                      "PLAN.json) so plumb can finish the nodes Slurm shows drained by it",
                      c.run_id, journal_name, c.run_id));
    c.kind = ResumeChoice::Kind::kRecoverLost;
    return c;
  }
  const RunRecord& run = **rec;
  if (run.outcome == RunState::kDone) {
    c.kind = ResumeChoice::Kind::kAlreadyDone;
    return c;
  }
  if (have_plan_file)
    return Diagnostic::Error(
        "apply.resume",
        fmt::format("run {} is in {}: --resume continues it with the plan it recorded; the plan "
                    "file would not be read (give it only when the journal lost the run)",
                    c.run_id, journal_name));
  auto j = nlohmann::json::parse(run.plan_json, nullptr, false);
  auto p = PlanFromJson(j);
  if (!p) return p.error();
  c.plan = std::move(*p);
  c.run_commit = run.commit;
  return c;
}

Result<std::vector<std::string>> FailedNodesInJournal(Journal& journal, const std::string& run) {
  auto nodes = journal.Nodes(run);
  if (!nodes) return nodes.error();
  std::vector<std::string> failed;
  for (const NodeRecord& n : *nodes)
    if (n.status == NodeState::kFailed) failed.push_back(n.node);
  return failed;
}

Result<std::vector<std::string>> FailedNodesInSchedulers(const Schedulers& schedulers,
                                                         const std::string& run) {
  std::set<std::string> failed;
  for (const auto& [kind, d] : schedulers.by_kind) {
    auto q = d->Query({});
    if (!q) return q.error();   // a partial answer would retry too few nodes, silently
    for (const auto& [name, n] : *q)
      if (auto pr = n.drain ? ParsePlumbReason(n.reason) : std::nullopt;
          pr && pr->run == run && pr->failed)
        failed.insert(name);
  }
  return std::vector<std::string>(failed.begin(), failed.end());
}

Result<ApplyCommit> CommitForSavedPlan(
    const Plan& plan, const std::string& run_commit, const std::string& ref,
    const std::function<Result<std::string>(const std::string& ref)>& resolve) {
  if (!run_commit.empty()) return ApplyCommit{run_commit, ""};
  if (ref.empty()) return ApplyCommit{plan.source.commit, ""};
  auto c = resolve(ref);
  if (!c) return c.error();
  ApplyCommit out{*c, ""};
  if (*c != plan.source.commit)
    out.note = fmt::format("the plan was made at {}; {} is at {}: applying it there if every "
                           "planned node wants the same",
                           plan.source.commit.substr(0, 12), ref, c->substr(0, 12));
  return out;
}

std::optional<PlanRefusal> CheckSavedPlan(const Plan& plan, const inventory::Cluster& cluster,
                                          const DesiredByNode& desired, const SchedulerView& view,
                                          const inventory::FileSource* files,
                                          const std::string& ref) {
  // The digest says the file is as sealed; the commit says what it may ask. Nodes the plan says
  // are out cost no budget only if the scheduler shows them out now.
  Diagnostics d = CheckPlanAgainstCommit(plan, cluster, desired, view.ok() ? &view.nodes : nullptr,
                                         files);
  if (!d.HasErrors()) return std::nullopt;
  const std::string applied = cluster.source.commit.substr(0, 12);
  PlanRefusal r;
  r.diags = std::move(d);
  if (cluster.source.commit != plan.source.commit)
    r.headline = fmt::format("the plan (made at {}) does not hold at commit {}, which {} names; "
                             "nothing was touched:",
                             plan.source.commit.substr(0, 12), applied, ref);
  else
    r.headline = fmt::format("the plan does not follow from commit {} (it was edited, or made by "
                             "another plumb, or nodes it took as out are back in service{}); "
                             "nothing was touched:",
                             applied,
                             view.ok() ? "" : "; the scheduler could not be read: " + view.error);
  return r;
}

Result<Plan> NarrowPlanToLimit(const Plan& plan, const inventory::Cluster& cluster,
                               const DesiredByNode& desired, const SchedulerView& view,
                               const std::string& limit, std::vector<std::string>* left_out) {
  auto keep = SelectPlanNodes(plan, cluster, limit);
  if (!keep) return keep.error();
  if (!view.ok())
    return Diagnostic::Error("apply.limit", "cannot form the batches for --limit: " + view.error);
  return LimitPlan(plan, *keep, cluster, desired, view.nodes, left_out);
}

Result<StartedRun> StartRun(Journal& journal, const Plan& plan, const RunStart& start,
                            const Schedulers& schedulers, const std::string& now) {
  StartedRun out;
  if (Status s = TakeClusterLock(journal, start.lock, now, &out.notes); !s) return s.error();
  // From here on a refusal gives the lock back: nothing half-started stays behind.
  auto refuse = [&](const Diagnostic& d) -> Result<StartedRun> {
    (void)journal.ReleaseLock(start.lock);
    return d;
  };
  const std::string& run = start.lock.run;
  if (start.in_journal) {
    if (Status s = journal.ReopenRun(run, start.lock.owner_host, start.lock.owner_pid); !s)
      return refuse(s.error());
    return out;
  }
  if (start.recover_lost) {
    // The schedulers must answer before the record is begun: a lost run begun again but not
    // recovered would be continued later as if it had drained nothing.
    if (SchedulerView v = ReadSchedulers(schedulers); !v.ok())
      return refuse(Diagnostic::Error("apply.resume", "cannot read back which nodes run " + run +
                                                          " drained: " + v.error));
  }
  if (Status s = journal.BeginRun(start.record); !s) return refuse(s.error());
  if (!start.recover_lost) return out;
  auto rec = RecoverFromScheduler(
      journal, [&](const std::string& rollout) { return schedulers.For(rollout); }, plan, run, now);
  if (!rec) return refuse(rec.error());
  out.adopt = rec->adopt;
  out.notes.push_back(fmt::format(
      "run {} was not in the journal; adopting {} node(s) its drain reason names{}", run,
      rec->adopt.size(),
      rec->failed.empty() ? std::string()
                          : fmt::format(" ({} more failed before: left as they are)",
                                        rec->failed.size())));
  return out;
}

}  // namespace plumb::plans
