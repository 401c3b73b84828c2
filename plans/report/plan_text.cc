#include "plans/report/plan_text.h"

#include <map>

#include <fmt/format.h>

#include "plans/report/drift_render.h"
#include "plans/report/hostlist.h"

namespace plumb::plans::report {
namespace {

std::string ActionLine(const PlannedAction& pa) {
  const modules::Action& a = pa.action;
  std::string line = fmt::format("    {} {}: {} -> {}  ({}, {})", ChangeSymbol(a), a.key,
                                 ShowValue(a.before), ShowValue(a.after),
                                 modules::DisruptionName(a.disruption), ChangeReasonName(pa.reason));
  if (pa.origin.known()) line += "  " + pa.origin.ToString();
  return line;
}

std::string Names(const std::vector<std::string>& names) {
  std::string list = CompressHostlist(names);
  return names.size() > 1 ? fmt::format("{} ({} nodes)", list, names.size()) : list;
}

}  // namespace

char ChangeSymbol(const modules::Action& a) {
  if (a.before.is_null()) return '+';
  if (a.after.is_null()) return '-';
  return '~';
}

std::string FormatDuration(int s) {
  if (s >= 3600) {
    int h = s / 3600, m = (s % 3600 + 59) / 60;
    if (m == 60) ++h, m = 0;
    return fmt::format("{}h {:02}m", h, m);
  }
  if (s >= 60) return fmt::format("{}m", (s + 59) / 60);
  return fmt::format("{}s", s);
}

std::string PlanToText(const Plan& plan) {
  std::string out = fmt::format("plumb plan: cluster {} at {}{} (ref {}), {}\n", plan.cluster,
                                plan.source.commit.substr(0, 12),
                                plan.source.working_tree ? " + UNCOMMITTED EDITS" : "",
                                plan.source.ref, plan.created_at);

  // Nodes whose changes are identical print once, under one host list.
  std::map<std::string, std::vector<const NodePlan*>> groups;
  std::vector<std::string> order;
  for (const NodePlan& n : plan.nodes) {
    std::string sig = n.rollout;
    for (const PlannedAction& pa : n.actions) sig += "\n" + ActionLine(pa);
    if (!groups.count(sig)) order.push_back(sig);
    groups[sig].push_back(&n);
  }
  for (const std::string& sig : order) {
    const auto& members = groups[sig];
    std::vector<std::string> names;
    for (const NodePlan* n : members) names.push_back(n->node);
    const NodePlan& first = *members.front();
    out += fmt::format("\n~ {}  [{}]\n", Names(names), modules::DisruptionName(first.disruption));
    for (const PlannedAction& pa : first.actions) out += ActionLine(pa) + "\n";
  }

  if (plan.HasChanges()) {
    out += "\nDisruption:\n";
    std::map<modules::Disruption, std::vector<std::string>> by;
    for (const NodePlan& n : plan.nodes) by[n.disruption].push_back(n.node);
    const std::pair<modules::Disruption, const char*> rows[] = {
        {modules::Disruption::kFirmwareFlash, "re-flash + reboot"},
        {modules::Disruption::kReboot, "drain + reboot"},
        {modules::Disruption::kDrain, "drain"},
        {modules::Disruption::kServiceRestart, "service restart"},
        {modules::Disruption::kNone, "live (no drain)"}};
    for (const auto& [d, label] : rows)
      if (by.count(d)) out += fmt::format("  {:<18} {}\n", label, Names(by[d]));

    out += "\nBatches:\n";
    for (const Batch& b : plan.batches) {
      out += fmt::format("  {:>3}. {:<7} {:<28} ~{:<7} rollout {}{}\n", b.index + 1,
                         b.canary ? "canary" : "", Names(b.nodes), FormatDuration(b.est_seconds),
                         b.rollout,
                         b.domains.empty() ? "" : "  domains " + CompressHostlist(b.domains));
    }
    out += fmt::format("\nPeak nodes out at once: {} (nodes already drained or down included)\n",
                       plan.peak_unavailable);
    out += fmt::format("Estimated duration: {} (batches in sequence; waits for running jobs not "
                       "included)\n", FormatDuration(plan.est_seconds));
  }
  if (!plan.blocking_jobs.empty()) {
    out += "\nJobs that block a drain now:\n";
    for (const BlockingJobs& bj : plan.blocking_jobs) {
      std::string jobs;
      for (size_t i = 0; i < bj.jobs.size(); ++i) jobs += (i ? ", " : "") + bj.jobs[i];
      out += fmt::format("  {}: {}\n", bj.node, jobs);
    }
  }
  std::vector<std::string> admin;
  for (const NodePlan& n : plan.nodes)
    if (n.admin_drained) admin.push_back(n.node);
  if (!admin.empty())
    out += fmt::format("\nDrained by an admin (plumb will leave them drained): {}\n", Names(admin));
  if (!plan.unreadable.empty()) {
    out += "\nUnreadable, not planned -- PLAN INCOMPLETE:\n";
    std::map<std::string, std::vector<std::string>> by_reason;
    for (const UnreadableNode& u : plan.unreadable) by_reason[u.reason].push_back(u.node);
    for (const auto& [reason, names] : by_reason)
      out += fmt::format("  {}: {}\n", Names(names), reason);
  }
  if (!plan.diags.empty()) out += "\n" + plan.diags.ToText();

  std::map<modules::Disruption, int> count;
  for (const NodePlan& n : plan.nodes) ++count[n.disruption];
  std::string detail;
  for (auto it = count.rbegin(); it != count.rend(); ++it)
    detail += fmt::format("{}{} {}", detail.empty() ? "" : ", ", it->second,
                          modules::DisruptionName(it->first));
  if (plan.HasChanges())
    out += fmt::format("\nPlan: {} node(s) to change ({}), {} in sync, {} unreadable.\n",
                       plan.nodes.size(), detail, plan.in_sync.size(), plan.unreadable.size());
  else
    out += fmt::format("\nNo changes: {} node(s) in sync, {} unreadable.\n", plan.in_sync.size(),
                       plan.unreadable.size());
  if (!plan.complete) out += "Plan incomplete: unreadable nodes were left out.\n";
  return out;
}

}  // namespace plumb::plans::report
