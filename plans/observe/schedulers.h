#pragma once
/// The schedulers a cluster drains through, one drainer per kind, each rollout policy's nodes
/// going to its own (a cluster may drain one pool through Slurm and another through
/// Kubernetes); and what they say now. `plumb plan` only reads them (plan_schedulers.h), apply
/// drains through them (plans/rollout).
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "inventory/model.h"
#include "modules/drain/drainer.h"

namespace plumb::plans {

/// One drainer per scheduler kind, and the one each rollout policy uses (a cluster may drain
/// one pool through Slurm and another through Kubernetes: each policy's nodes go to its own).
struct Schedulers {
  std::map<inventory::DrainScheduler, std::unique_ptr<modules::Drainer>> by_kind;
  std::map<std::string, modules::Drainer*> by_rollout;
  /// The drainer of policy `rollout`, or nullptr.
  modules::Drainer* For(const std::string& rollout) const;
};
using DrainerMaker =
    std::function<std::unique_ptr<modules::Drainer>(inventory::DrainScheduler scheduler)>;
/// The drainers of `cluster`'s rollout policies, each kind made once by `make`.
Schedulers SchedulersFor(const inventory::Cluster& cluster, const DrainerMaker& make);

/// What the schedulers say now, each node once; `error` names the first that could not be read
/// (the view is then partial and must not be relied on).
struct SchedulerView {
  std::map<std::string, modules::SchedulerNode> nodes;
  std::string error;
  bool ok() const { return error.empty(); }
};
SchedulerView ReadSchedulers(const Schedulers& schedulers);

}  // namespace plumb::plans
