#include "plans/observe/schedulers.h"

namespace plumb::plans {

modules::Drainer* Schedulers::For(const std::string& rollout) const {
  auto it = by_rollout.find(rollout);
  return it == by_rollout.end() ? nullptr : it->second;
}

Schedulers SchedulersFor(const inventory::Cluster& cluster, const DrainerMaker& make) {
  Schedulers s;
  for (const auto& [name, policy] : cluster.rollouts) {
    auto& d = s.by_kind[policy.scheduler];
    if (!d) d = make(policy.scheduler);
    s.by_rollout[name] = d.get();
  }
  return s;
}

SchedulerView ReadSchedulers(const Schedulers& schedulers) {
  SchedulerView v;
  for (const auto& [kind, d] : schedulers.by_kind) {
    auto q = d->Query({});
    if (!q) {
      v.error = q.error().message;
      break;
    }
    for (auto& [n, s] : *q) v.nodes.emplace(n, s);
  }
  return v;
}

}  // namespace plumb::plans
