// Engine: the plan's in-sync nodes show the commit's stack to the scheduler as the run starts
// (modules/drain/stack_tag.h). They need no change, so no NodeRun carries them; without this a
// cluster already at the commit would show no stack until something changed on each node.
#include "plans/rollout/rollout_internal.h"

#include <fmt/format.h>

// Events are built with designated initializers naming only the fields that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace plumb::plans::rollout_detail {

void Engine::ShowInSyncStacks() {
  if (!plan_.only_modules.empty() || opts_.stacks.empty() || plan_.in_sync.empty()) return;
  std::map<std::string, std::string> rollout_of;
  for (const auto& [rollout, nodes] : opts_.scope)
    for (const auto& n : nodes) rollout_of.emplace(n, rollout);
  std::map<modules::Drainer*, std::vector<std::string>> by_scheduler;
  for (const auto& n : plan_.in_sync) {
    auto st = opts_.stacks.find(n);
    if (st == opts_.stacks.end() || st->second.empty()) continue;
    auto ro = rollout_of.find(n);
    modules::Drainer& d = DrainerFor(ro == rollout_of.end() ? std::string() : ro->second);
    if (d.ShowsStacks()) by_scheduler[&d].push_back(n);
  }
  for (auto& [d, nodes] : by_scheduler) {
    if (stopping() || dead()) return;
    auto q = d->Query(nodes);
    if (!q) {
      Emit({.kind = RolloutEvent::Kind::kNote,
            .message = fmt::format("{} could not be read ({}): the in-sync nodes' stacks are not "
                                   "shown now (plumb drift --tag-stacks shows them later)",
                                   d->Name(), q.error().message)});
      continue;
    }
    for (const auto& n : nodes) {
      if (stopping() || dead()) return;
      auto it = q->find(n);
      if (it == q->end()) continue;
      const modules::SchedulerNode& sn = it->second;
      // Out of service, or claimed by a run about to take it out: someone else is working on
      // it (another run may be changing it to another commit), so its tag is theirs to set.
      if (sn.Unavailable() || sn.claim) continue;
      modules::StackTag want = modules::TagOf(opts_.stacks.at(n), Commit());
      if (!modules::TagProblem(want).empty()) want = {};   // no scheduler can carry it: none
      if (sn.stack_tag == want) continue;
      // Only over a tag plumb would have set for this node: none (lost when slurmctld
      // restarted, or never set), this run's commit, or the commit its marker had when planned.
      // Any other tag was set since the plan (another journal's run at another commit): theirs.
      // Left open: another journal's run changing this node live (no drain, no claim) right
      // now shows none; this run, which read the node in sync, shows its stack over that.
      const auto marker = plan_.markers.find(n);
      const bool ours = sn.stack_tag.empty() || sn.stack_tag.commit == want.commit ||
                        (marker != plan_.markers.end() && !marker->second.empty() &&
                         sn.stack_tag.commit == marker->second.substr(0, modules::kStackCommitLength));
      if (!ours) continue;
      Status s = d->SetStack(sn, want);
      Emit({.kind = RolloutEvent::Kind::kNote, .node = n,
            .message = s ? fmt::format("in sync: shows stack {} (was {})", modules::TagText(want),
                                       modules::TagText(sn.stack_tag))
                         : fmt::format("in sync, but could not show stack {}: {}",
                                       modules::TagText(want), s.error().message)});
    }
  }
}

}  // namespace plumb::plans::rollout_detail
