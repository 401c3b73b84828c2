#pragma once
/// The plan's per-stack counts (Plan::stacks): how many nodes the schedulers show on each stack
/// now and once the plan is applied, and the jobs that ask for a stack the plan takes off its
/// last node. Pure; unit-tested in tests/plans/plan/stack_counts_test.cc.
#include <map>
#include <string>
#include <vector>

#include "modules/drain/drainer.h"
#include "plans/plan/plan.h"
#include "plans/plan/planner.h"

namespace plumb::plans {

/// Counts the nodes of `view` whose scheduler shows stacks (SchedulerNode::shows_stacks).
/// After the plan, a node shows its desired stack when the plan changes it (and apply will:
/// not skipped as unhealthy, not held by another run) or finds it in sync in service and
/// unclaimed; any other node (not read, unreadable, not selected, out) keeps what it shows now.
/// A job is stranded, under each stack it asks for that goes from some nodes to none, when
/// none of the stacks it asks for keeps a node. Sorted by stack name.
std::vector<StackCount> CountStacks(const Plan& plan, const DesiredByNode& desired,
                                    const std::map<std::string, modules::SchedulerNode>& view,
                                    const std::vector<modules::StackRequest>& requests);

/// "12 (alice: train, PENDING), 13 (bob: eval, RUNNING)", the first 5 and a count.
std::string StrandedText(const StackCount& c);

}  // namespace plumb::plans
