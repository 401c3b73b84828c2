#include "plans/report/plan_text.h"

#include <map>

#include <fmt/format.h>

#include "plans/report/drift_render.h"
#include "inventory/hostlist.h"

namespace plumb::plans::report {
namespace {

std::string ActionLine(const PlannedAction& pa) {
  const modules::Action& a = pa.action;
  std::string line = fmt::format("    {} {}: {} -> {}  ({}, {})", ChangeSymbol(a), a.key,
                                 ShowValue(a.before), ShowValue(a.after),
                                 modules::DisruptionName(a.disruption), ChangeReasonName(pa.reason));
  if (pa.origin.known()) line += "  " + pa.origin.ToString();
  // The commands apply will run for it on this node (apt on one, dnf on another), so a review
  // sees what happens, not only what changes.
  if (auto c = a.params.find("commands"); c != a.params.end() && c->is_array())
    for (const auto& cmd : *c)
      if (cmd.is_string()) line += "\n        $ " + cmd.get<std::string>();
  return line;
}

std::string WaivedLine(const WaivedChange& w) {
  const modules::Action& a = w.change.action;
  return fmt::format("    = {}: {} -> {}  waived until {}: {} ({})  {}", a.key, ShowValue(a.before),
                     ShowValue(a.after), w.expires.empty() ? "revoked" : w.expires, w.reason,
                     w.owner, w.where.known() ? w.where.ToString() : "waivers.yaml");
}

std::string Names(const std::vector<std::string>& names) {
  std::string list = inventory::CompressHostlist(names);
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

std::vector<DisruptionRow> DisruptionRows(const Plan& plan) {
  std::map<modules::Disruption, std::vector<std::string>> by;
  for (const NodePlan& n : plan.nodes) by[n.disruption].push_back(n.node);
  const std::pair<modules::Disruption, const char*> rows[] = {
      {modules::Disruption::kFirmwareFlash, "re-flash + reboot"},
      {modules::Disruption::kReboot, "drain + reboot"},
      {modules::Disruption::kDrain, "drain"},
      {modules::Disruption::kServiceRestart, "service restart"},
      {modules::Disruption::kNone, "live (no drain)"}};
  std::vector<DisruptionRow> out;
  for (const auto& [d, label] : rows)
    if (auto it = by.find(d); it != by.end()) out.push_back({label, std::move(it->second)});
  return out;
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
    if (n.return_to_service) sig += "\nreturn";
    for (const PlannedAction& pa : n.actions) sig += "\n" + ActionLine(pa);
    if (const NodeWaived* w = plan.FindWaived(n.node))
      for (const WaivedChange& c : w->changes) sig += "\n" + WaivedLine(c);
    if (!groups.count(sig)) order.push_back(sig);
    groups[sig].push_back(&n);
  }
  for (const std::string& sig : order) {
    const auto& members = groups[sig];
    std::vector<std::string> names;
    for (const NodePlan* n : members) names.push_back(n->node);
    const NodePlan& first = *members.front();
    if (first.return_to_service) {
      out += fmt::format("\n~ {}  [return to service]\n    no change left: verify, run the health "
                         "gates, return to service (left drained by a failed run)\n",
                         Names(names));
    } else {
      out += fmt::format("\n~ {}  [{}]\n", Names(names), modules::DisruptionName(first.disruption));
    }
    for (const PlannedAction& pa : first.actions) out += ActionLine(pa) + "\n";
    if (const NodeWaived* w = plan.FindWaived(first.node))
      for (const WaivedChange& c : w->changes) out += WaivedLine(c) + "\n";
  }
  // Nodes whose only differences are waived: in sync for apply, shown so nobody is surprised.
  {
    std::map<std::string, std::vector<std::string>> waived_only;
    std::vector<std::string> worder;
    for (const NodeWaived& w : plan.waived) {
      if (plan.FindNode(w.node)) continue;
      std::string sig;
      for (const WaivedChange& c : w.changes) sig += WaivedLine(c) + "\n";
      if (!waived_only.count(sig)) worder.push_back(sig);
      waived_only[sig].push_back(w.node);
    }
    for (const std::string& sig : worder)
      out += fmt::format("\n= {}  [waived: no change]\n{}", Names(waived_only[sig]), sig);
  }

  if (plan.HasChanges()) {
    out += "\nDisruption:\n";
    for (const DisruptionRow& r : DisruptionRows(plan))
      out += fmt::format("  {:<18} {}\n", r.label, Names(r.nodes));

    out += "\nBatches:\n";
    for (const Batch& b : plan.batches) {
      out += fmt::format("  {:>3}. {:<7} {:<28} ~{:<7} rollout {}{}\n", b.index + 1,
                         b.canary ? "canary" : "", Names(b.nodes), FormatDuration(b.est_seconds),
                         b.rollout,
                         b.domains.empty() ? "" : "  domains " + inventory::CompressHostlist(b.domains));
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
  {
    std::map<std::string, std::vector<std::string>> held, left;
    for (const NodePlan& n : plan.nodes) {
      if (!n.held_by_run.empty()) held[n.held_by_run].push_back(n.node);
      if (!n.left_by_run.empty())
        left[fmt::format("run {}, failed at {}", n.left_by_run, n.left_at_step)].push_back(n.node);
    }
    for (const auto& [run, names] : held)
      out += fmt::format("\nHeld by plumb run {} (still working on them): {}; apply leaves them "
                         "alone until that run is done (plumb apply --resume {})\n",
                         run, Names(names), run);
    for (const auto& [why, names] : left)
      out += fmt::format("\nLeft drained by {}: {}; this plan takes them over and returns them to "
                         "service once they converge\n", why, Names(names));
  }
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
  size_t waived_keys = 0;
  for (const NodeWaived& w : plan.waived) waived_keys += w.changes.size();
  const std::string waived_note =
      waived_keys ? fmt::format(", {} waived key(s) left as they are", waived_keys) : "";
  if (plan.HasChanges())
    out += fmt::format("\nPlan: {} node(s) to change ({}), {} in sync, {} unreadable{}.\n",
                       plan.nodes.size(), detail, plan.in_sync.size(), plan.unreadable.size(),
                       waived_note);
  else
    out += fmt::format("\nNo changes: {} node(s) in sync, {} unreadable{}.\n", plan.in_sync.size(),
                       plan.unreadable.size(), waived_note);
  if (!plan.complete) out += "Plan incomplete: unreadable nodes were left out.\n";
  return out;
}

}  // namespace plumb::plans::report
