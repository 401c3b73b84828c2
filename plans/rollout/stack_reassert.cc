#include "plans/rollout/stack_reassert.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "plans/plan/drain_reason.h"

namespace plumb::plans {

namespace {
bool Repairs(const NodePlan& np) {
  return std::any_of(np.actions.begin(), np.actions.end(),
                     [](const PlannedAction& a) { return a.reason == ChangeReason::kRepair; });
}
// A plumb run drained or claimed it: that run sets the node's tags itself.
bool InARun(const modules::SchedulerNode& sn) {
  return sn.claim.has_value() || (sn.drain && ParsePlumbReason(sn.reason).has_value());
}
}  // namespace

std::vector<StackTagChange> StackTagChanges(const Plan& plan, const DesiredByNode& desired,
                                            const std::map<std::string, modules::SchedulerNode>& view,
                                            const std::string& commit) {
  std::vector<StackTagChange> out;
  const std::string commit12 = commit.substr(0, modules::kStackCommitLength);
  auto consider = [&](const std::string& node, const modules::StackTag& want, std::string why) {
    auto v = view.find(node);
    if (v == view.end() || InARun(v->second) || v->second.stack_tag == want) return;
    // Only over a tag plumb would have set for this node: none (lost in a restart), this
    // commit's, or the one its marker names (the last apply's). Another tag was set by a run
    // since this read's marker: that run's to keep.
    const modules::StackTag& now = v->second.stack_tag;
    auto m = plan.markers.find(node);
    const bool ours = now.empty() || now.commit == commit12 ||
                      (m != plan.markers.end() && !m->second.empty() &&
                       now.commit == m->second.substr(0, modules::kStackCommitLength));
    if (!ours) return;
    out.push_back({node, now, want, std::move(why)});
  };
  for (const auto& node : plan.in_sync) {
    auto d = desired.find(node);
    if (d == desired.end() || d->second.stack.empty()) continue;
    modules::StackTag want = modules::TagOf(d->second.stack, commit);
    // A name no scheduler can carry shows none, never an older stack's tag.
    if (!modules::TagProblem(want).empty()) want = {};
    consider(node, want, "in sync");
  }
  for (const auto& np : plan.nodes)
    if (Repairs(np)) consider(np.node, {}, "drifted from its commit (repair)");
  std::sort(out.begin(), out.end(),
            [](const StackTagChange& a, const StackTagChange& b) { return a.node < b.node; });
  return out;
}

Result<std::map<std::string, modules::SchedulerNode>> ReadStackView(
    const Schedulers& schedulers, const DesiredByNode& desired) {
  std::map<modules::Drainer*, std::vector<std::string>> asks;
  for (const auto& [name, nd] : desired)
    if (modules::Drainer* d = schedulers.For(nd.rollout); d && d->ShowsStacks())
      asks[d].push_back(name);
  std::map<std::string, modules::SchedulerNode> view;
  for (auto& [d, nodes] : asks) {
    auto q = d->Query(nodes);
    if (!q) return q.error();
    for (auto& [name, sn] : *q) view[name] = std::move(sn);
  }
  return view;
}

std::vector<StackTagChange> WriteStackTags(const Schedulers& schedulers,
                                           const DesiredByNode& desired,
                                           const std::map<std::string, modules::SchedulerNode>& view,
                                           const std::vector<StackTagChange>& changes,
                                           Diagnostics& diags) {
  std::vector<StackTagChange> done;
  for (const auto& c : changes) {
    auto d = desired.find(c.node);
    auto v = view.find(c.node);
    modules::Drainer* sched = d == desired.end() ? nullptr : schedulers.For(d->second.rollout);
    if (!sched || v == view.end()) continue;
    if (Status s = sched->SetStack(v->second, c.now); !s) {
      diags.Add(Diagnostic::Warning(
          "stack.tag", fmt::format("{}: could not show stack {} in {}: {}", c.node,
                                   modules::TagText(c.now), sched->Name(), s.error().message)));
      continue;
    }
    done.push_back(c);
  }
  return done;
}

}  // namespace plumb::plans
