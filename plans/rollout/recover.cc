#include "plans/rollout/recover.h"

#include <set>

#include "plans/plan/drain_reason.h"

namespace plumb::plans {

Result<Recovery> RecoverFromScheduler(
    Journal& journal, const std::function<modules::Drainer*(const std::string& rollout)>& drainer_for,
    const Plan& plan, const std::string& run, const std::string& now) {
  Recovery r;
  std::set<modules::Drainer*> asked;
  for (const NodePlan& np : plan.nodes) {
    modules::Drainer* d = drainer_for(np.rollout);
    if (!d || !asked.insert(d).second) continue;
    auto q = d->Query({});
    if (!q) return q.error();   // never guess which nodes the run had out
    for (const auto& [name, n] : *q) {
      const NodePlan* mine = plan.FindNode(name);
      if (!mine || drainer_for(mine->rollout) != d) continue;
      auto reason = n.drain ? ParsePlumbReason(n.reason) : std::nullopt;
      if (!reason || reason->run != run) continue;
      if (reason->failed) {
        // It failed in the lost attempt: it stays failed and drained (and counts against
        // max_failures), rather than being retried as if nothing had happened.
        NodeRecord rec;
        rec.run = run;
        rec.node = name;
        rec.status = NodeState::kFailed;
        rec.last_step = "journal-lost";
        rec.error = "failed before the journal was lost: " + n.reason;
        rec.ended_at = now;
        if (Status s = journal.PutNode(rec); !s) return s.error();
        r.failed.push_back(name);
        continue;
      }
      r.adopt.push_back(name);
    }
  }
  return r;
}

}  // namespace plumb::plans
