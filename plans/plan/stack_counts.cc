#include "plans/plan/stack_counts.h"

#include <set>

#include <fmt/format.h>

namespace plumb::plans {

std::vector<StackCount> CountStacks(const Plan& plan, const DesiredByNode& desired,
                                    const std::map<std::string, modules::SchedulerNode>& view,
                                    const std::vector<modules::StackRequest>& requests) {
  // The nodes whose tag this plan sets: changed by apply, or in sync (apply shows their stack
  // as it starts).
  std::set<std::string> set_by_plan(plan.in_sync.begin(), plan.in_sync.end());
  for (const NodePlan& np : plan.nodes)
    if (!np.skipped_unhealthy && np.held_by_run.empty()) set_by_plan.insert(np.node);
  std::map<std::string, StackCount> by_stack;
  for (const auto& [name, sn] : view) {
    if (!sn.shows_stacks) continue;
    if (!sn.stack_tag.stack.empty()) ++by_stack[sn.stack_tag.stack].now;
    std::string after = sn.stack_tag.stack;
    if (set_by_plan.count(name)) {
      auto d = desired.find(name);
      after = d == desired.end() ? std::string() : d->second.stack;
      if (!modules::TagProblem(modules::TagOf(after, plan.source.commit)).empty()) after.clear();
    }
    if (!after.empty()) ++by_stack[after].after;
  }
  for (auto& [stack, c] : by_stack) {
    c.stack = stack;
    if (c.after == 0 && c.now > 0)
      for (const auto& r : requests)
        if (r.stack == stack) c.stranded.push_back(r);
  }
  std::vector<StackCount> out;
  for (auto& [stack, c] : by_stack) out.push_back(std::move(c));
  return out;
}

std::string StrandedText(const StackCount& c) {
  std::string out;
  for (size_t i = 0; i < c.stranded.size() && i < 5; ++i) {
    const auto& r = c.stranded[i];
    out += fmt::format("{}{} ({}{}{})", i ? ", " : "", r.id, r.user.empty() ? "" : r.user + ": ",
                       r.name, r.state.empty() ? "" : ", " + r.state);
  }
  if (c.stranded.size() > 5) out += fmt::format(" and {} more", c.stranded.size() - 5);
  return out;
}

}  // namespace plumb::plans
