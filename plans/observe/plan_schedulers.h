#pragma once
/// What `plumb plan` reads from the schedulers: every scheduler the planned nodes' rollout
/// policies drain through (a cluster may drain one pool through Slurm and another through
/// Kubernetes), each node's state from its own policy's scheduler, as apply will see it. Only
/// Query is ever called: a plan changes nothing. Tested with fake drainers
/// (tests/plans/observe/plan_schedulers_test.cc); cmd/plan_scheduler.cc builds it with the real ones.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inventory/model.h"
#include "modules/drain/drainer.h"
#include "plans/observe/schedulers.h"
#include "plans/plan/planner.h"
#include "schemas/diagnostics.h"

namespace plumb::plans {

/// A Drainer that only reads: Query asks each scheduler in `schedulers` about the nodes whose
/// rollout policy (in `desired`) drains through it, a scheduler no asked node uses not at all,
/// and keeps each node's answer from its own scheduler. Any scheduler that cannot be read fails
/// the whole Query (a view missing one pool would count its nodes as in service). Drain,
/// Resume, Evict, SetClaim and SetStack refuse. `desired` must outlive it.
class ReadOnlySchedulers final : public modules::Drainer {
 public:
  ReadOnlySchedulers(const inventory::Cluster& cluster, const DesiredByNode& desired,
                     Schedulers schedulers);
  std::string_view Name() const override { return "schedulers"; }
  /// `nodes` empty: every node of `desired`.
  Result<std::map<std::string, modules::SchedulerNode>> Query(
      const std::vector<std::string>& nodes) override;
  Status Drain(const std::string& node, const std::string& reason) override;
  Status Resume(const std::string& node) override;
  Status Evict(const std::string& node) override;
  Status SetClaim(const modules::SchedulerNode& current, const modules::NodeClaim& claim) override;
  /// Some scheduler of the cluster shows stacks; Query marks each node whose own does
  /// (SchedulerNode::shows_stacks).
  bool ShowsStacks() const override;
  Status SetStack(const modules::SchedulerNode& current, const modules::StackTag& tag) override;
  /// Every stack-showing scheduler's requests, together.
  Result<std::vector<modules::StackRequest>> StackRequests() override;

 private:
  const inventory::Cluster& cluster_;
  const DesiredByNode& desired_;
  Schedulers schedulers_;
};

/// The nodes among `nodes` (every node of `desired` when empty) whose rollout policy drains
/// through a scheduler (not `none`) that `view` does not show: apply would fail them at the
/// drain ("not known to the scheduler"). A warning naming them, per scheduler, at the first
/// one's inventory line; nullopt when there is none.
std::optional<Diagnostic> NodesUnknownToScheduler(
    const inventory::Cluster& cluster, const DesiredByNode& desired,
    const std::vector<std::string>& nodes,
    const std::map<std::string, modules::SchedulerNode>& view);

}  // namespace plumb::plans
