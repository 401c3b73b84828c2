#pragma once
/// `plumb drift --tag-stacks`: the scheduler's stack tags (modules/drain/stack_tag.h)
/// made true again from a read of the nodes, for tags the scheduler lost (Slurm forgets
/// features set by `scontrol update` when slurmctld restarts or reconfigures) or that went
/// stale. Only tags are written, never a node, never a node's service state:
///   in sync with the commit          -> shows <stack>@<commit>
///   drifted from its own commit      -> shows none: it runs no stack exactly, so a job that
///   (a "repair" difference)             asks for one must not land there
///   only new intent (not applied yet)-> left as it is: it still runs the stack it was given
///   unreadable, or a plumb run's     -> left as it is (a run that drained or claimed a node
///   (drained by plumb, or claimed)      sets its tags itself)
///   a tag plumb did not set for it   -> left as it is: only none, this commit's, or the one
///   (another commit than its marker's)  its marker names (the last apply's) is overwritten
/// Unit-tested in tests/plans/rollout/stack_reassert_test.cc.
#include <map>
#include <string>
#include <vector>

#include "modules/drain/drainer.h"
#include "plans/observe/schedulers.h"
#include "plans/plan/plan.h"
#include "plans/plan/planner.h"
#include "schemas/diagnostics.h"

namespace plumb::plans {

struct StackTagChange {
  std::string node;
  modules::StackTag was, now;
  std::string why;   ///< "in sync", "drifted (repair)"
};

/// The tags to write: `plan` is a drift read's (unsealed is fine) at `commit`, `view` the
/// nodes as their schedulers show them (a node missing there is left alone). Sorted by node.
std::vector<StackTagChange> StackTagChanges(const Plan& plan, const DesiredByNode& desired,
                                            const std::map<std::string, modules::SchedulerNode>& view,
                                            const std::string& commit);

/// What the schedulers of `desired`'s nodes show now: each policy's drainer that ShowsStacks
/// asked once about its nodes. An error names the first scheduler that could not be read.
Result<std::map<std::string, modules::SchedulerNode>> ReadStackView(
    const Schedulers& schedulers, const DesiredByNode& desired);

/// Writes `changes` through each node's scheduler; the changes written, and a located-free
/// error per refusal in `diags` (warnings: a refused tag does not make the read wrong).
std::vector<StackTagChange> WriteStackTags(const Schedulers& schedulers,
                                           const DesiredByNode& desired,
                                           const std::map<std::string, modules::SchedulerNode>& view,
                                           const std::vector<StackTagChange>& changes,
                                           Diagnostics& diags);

}  // namespace plumb::plans
