#include "plans/plan/stack_counts.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace plumb::plans {

std::vector<StackCount> CountStacks(const Plan& plan, const DesiredByNode& desired,
                                    const std::map<std::string, modules::SchedulerNode>& view,
                                    const std::vector<modules::StackRequest>& requests) {
  // The nodes whose tag this plan sets: changed by apply, or in sync and in service, not
  // claimed (apply shows their stack as it starts; plans/rollout/stack_tags.cc skips the rest).
  std::set<std::string> set_by_plan;
  for (const std::string& n : plan.in_sync)
    if (auto v = view.find(n); v != view.end() && !v->second.Unavailable() && !v->second.claim)
      set_by_plan.insert(n);
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
  for (auto& [stack, c] : by_stack) c.stack = stack;
  // A job is stranded when no stack it asks for keeps a node: its stacks are alternatives
  // (stack_a|stack_b, a label In [a, b]; two stacks joined by & match no node anyway).
  std::map<std::string, std::vector<const modules::StackRequest*>> by_job;
  for (const auto& r : requests) by_job[r.id].push_back(&r);
  for (const auto& [id, asks] : by_job) {
    const bool kept = std::any_of(asks.begin(), asks.end(), [&](const modules::StackRequest* r) {
      auto c = by_stack.find(r->stack);
      return c == by_stack.end() ? false : c->second.after > 0;
    });
    if (kept) continue;
    for (const modules::StackRequest* r : asks)
      if (auto c = by_stack.find(r->stack); c != by_stack.end() && c->second.now > 0)
        c->second.stranded.push_back(*r);
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
