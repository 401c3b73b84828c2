#include "plans/report/plan_text.h"

#include <map>

#include <fmt/format.h>

#include "plans/plan/stack_counts.h"

#include "plans/report/drift_render.h"
#include "inventory/hostlist.h"
#include "plans/core/duration_text.h"
#include "plans/plan/findings.h"
#include "plans/report/facts_age.h"
#include "plans/report/groups.h"
#include "plans/report/rows.h"

namespace plumb::plans::report {
namespace {

// One line per row of the action (a member of a map each), then why it is wanted when the
// values do not say, then the commands.
std::string ActionLine(const PlannedAction& pa) {
  const modules::Action& a = pa.action;
  std::string line;
  for (const ChangeRow& r : RowsOf(a)) {
    if (!line.empty()) line += "\n";
    const char symbol = r.before.is_null() ? '+' : r.after.is_null() ? '-' : '~';
    line += fmt::format("    {} {}: {} -> {}  ({}, {})", symbol, RowName(r.key, r.member),
                        ShowValue(r.before), ShowValue(r.after),
                        modules::DisruptionName(a.disruption), ChangeReasonName(pa.reason));
    if (pa.origin.known()) line += "  " + pa.origin.ToString();
    if (!r.why.empty()) line += "\n        why: " + r.why;
  }
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

std::string FindingLine(const Finding& f) {
  std::string line = fmt::format("    {} {}", f.check.status == modules::CheckStatus::kFail ? "!" : "?",
                                 FindingText(f.check));
  if (f.origin.known()) line += "  " + f.origin.ToString();
  return line;
}

}  // namespace

std::string HealthNote(const Plan& plan) {
  size_t unhealthy = 0, findings = 0, skipped = 0;
  for (const NodeFindings& h : plan.health) {
    unhealthy += h.Unhealthy() ? 1 : 0;
    findings += h.findings.size();
  }
  for (const NodePlan& n : plan.nodes) skipped += n.skipped_unhealthy ? 1 : 0;
  if (findings == 0) return {};
  return fmt::format("; health: {} node(s) unhealthy, {} finding(s){}", unhealthy, findings,
                     skipped ? fmt::format(", {} node(s) skipped", skipped) : "");
}

std::string SkippedUnhealthyNote(const Plan& plan) {
  std::map<std::string, std::vector<std::string>> by_rollout;
  for (const NodePlan& n : plan.nodes)
    if (n.skipped_unhealthy) by_rollout[n.rollout].push_back(n.node);
  std::string out;
  for (const auto& [rollout, names] : by_rollout)
    out += fmt::format("{}left as it is, unhealthy (rollout {}: unhealthy: skip): {}; repair, then "
                       "plan again", out.empty() ? "" : "\n", rollout, Names(names));
  return out;
}

char ChangeSymbol(const modules::Action& a) {
  if (a.before.is_null()) return '+';
  if (a.after.is_null()) return '-';
  return '~';
}

std::string SummaryText(const Plan& plan) {
  // A node skipped as unhealthy is not counted among those to change: this apply leaves it.
  std::map<modules::Disruption, int> count;
  size_t to_change = 0, skipped = 0;
  for (const NodePlan& n : plan.nodes) {
    if (n.skipped_unhealthy) {
      ++skipped;
      continue;
    }
    ++to_change;
    ++count[n.disruption];
  }
  std::string detail;
  for (auto it = count.rbegin(); it != count.rend(); ++it)
    detail += fmt::format("{}{} {}", detail.empty() ? "" : ", ", it->second,
                          modules::DisruptionName(it->first));
  size_t waived_keys = 0;
  for (const NodeWaived& w : plan.waived) waived_keys += w.changes.size();
  std::string notes = waived_keys ? fmt::format(", {} waived key(s) left as they are", waived_keys) : "";
  notes += HealthNote(plan);
  if (to_change > 0)
    return fmt::format("Plan: {} node(s) to change ({}), {} in sync, {} unreadable{}.", to_change,
                       detail, plan.in_sync.size(), plan.unreadable.size(), notes);
  if (skipped > 0)
    return fmt::format("Nothing to apply: {} node(s) with changes left as they are (unhealthy), {} in "
                       "sync, {} unreadable{}.", skipped, plan.in_sync.size(), plan.unreadable.size(),
                       notes);
  return fmt::format("No changes: {} node(s) in sync, {} unreadable{}.", plan.in_sync.size(),
                     plan.unreadable.size(), notes);
}

std::vector<DisruptionRow> DisruptionRows(const Plan& plan) {
  std::map<modules::Disruption, std::vector<std::string>> by;
  for (const NodePlan& n : plan.nodes)
    if (!n.skipped_unhealthy) by[n.disruption].push_back(n.node);   // apply leaves it out
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
  std::string out = fmt::format("plumb plan: cluster {} at {}{} (ref {}), {}\n{}\n", plan.cluster,
                                plan.source.commit.substr(0, 12),
                                plan.source.working_tree ? " + UNCOMMITTED EDITS" : "",
                                plan.source.ref, plan.created_at,
                                GatheredText(plan.gathered_at, plan.created_at));

  // Nodes whose changes are identical print once, under one host list.
  GroupsInOrder<const NodePlan*> groups;
  for (const NodePlan& n : plan.nodes) {
    std::string sig = n.rollout;
    if (n.return_to_service) sig += "\nreturn";
    if (n.skipped_unhealthy) sig += "\nskipped";
    for (const PlannedAction& pa : n.actions) sig += "\n" + ActionLine(pa);
    if (const NodeWaived* w = plan.FindWaived(n.node))
      for (const WaivedChange& c : w->changes) sig += "\n" + WaivedLine(c);
    groups.Add(sig, &n);
  }
  for (const auto& [sig, members] : groups.groups()) {
    std::vector<std::string> names;
    for (const NodePlan* n : members) names.push_back(n->node);
    const NodePlan& first = *members.front();
    // Skipped: what it would take, shown, and that apply leaves it (its findings are below).
    const std::string skipped =
        first.skipped_unhealthy
            ? fmt::format("  SKIPPED: unhealthy (rollout {}: unhealthy: skip; see Health)", first.rollout)
            : "";
    if (first.return_to_service) {
      out += fmt::format("\n~ {}  [return to service]{}\n    no change left: verify, run the health "
                         "gates, return to service (left drained by a failed run)\n",
                         Names(names), skipped);
    } else {
      out += fmt::format("\n~ {}  [{}]{}\n", Names(names), modules::DisruptionName(first.disruption),
                         skipped);
    }
    for (const PlannedAction& pa : first.actions) out += ActionLine(pa) + "\n";
    if (const NodeWaived* w = plan.FindWaived(first.node))
      for (const WaivedChange& c : w->changes) out += WaivedLine(c) + "\n";
  }
  // Nodes whose only differences are waived: in sync for apply, shown so nobody is surprised.
  {
    GroupsInOrder<std::string> waived_only;
    for (const NodeWaived& w : plan.waived) {
      if (plan.FindNode(w.node)) continue;
      std::string sig;
      for (const WaivedChange& c : w.changes) sig += WaivedLine(c) + "\n";
      waived_only.Add(sig, w.node);
    }
    for (const auto& [sig, names] : waived_only.groups())
      out += fmt::format("\n= {}  [waived: no change]\n{}", Names(names), sig);
  }

  // Health findings: what the nodes' checks found. Not changes: nothing here is applied, and a
  // node whose only findings are these is in sync.
  if (!plan.health.empty()) {
    GroupsInOrder<std::string> by_findings;
    for (const NodeFindings& h : plan.health) {
      std::string lines;
      for (const Finding& f : h.findings) lines += FindingLine(f) + "\n";
      by_findings.Add(lines, h.node);
    }
    out += "\nHealth (findings, not changes: nothing here is applied):\n";
    for (const auto& [lines, names] : by_findings.groups()) {
      std::string what;
      for (const std::string& n : names)
        if (const NodePlan* np = plan.FindNode(n); np && np->skipped_unhealthy) what = "  skipped";
      out += fmt::format("  {}:{}\n{}", Names(names), what, lines);
    }
  }

  if (plan.HasApplicable()) {
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
  if (const std::string skipped = SkippedUnhealthyNote(plan); !skipped.empty())
    out += "\nNot applied: " + skipped + "\n";
  if (!plan.blocking_jobs.empty()) {
    out += "\nJobs that block a drain now:\n";
    for (const BlockingJobs& bj : plan.blocking_jobs) {
      std::string jobs;
      for (size_t i = 0; i < bj.jobs.size(); ++i) jobs += (i ? ", " : "") + bj.jobs[i];
      out += fmt::format("  {}: {}\n", bj.node, jobs);
    }
  }
  if (!plan.stacks.empty()) {
    out += "\nStacks (nodes the schedulers show on each: now -> after this plan):\n";
    for (const StackCount& c : plan.stacks) {
      out += fmt::format("  {:<28} {:>5} -> {}\n", c.stack, c.now, c.after);
      if (!c.stranded.empty())
        out += fmt::format("    LAST NODE LEAVES: {} job(s) ask for it and would never run: {}\n",
                           c.stranded.size(), StrandedText(c));
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

  out += "\n" + SummaryText(plan) + "\n";
  if (!plan.complete) out += "Plan incomplete: unreadable nodes were left out.\n";
  return out;
}

}  // namespace plumb::plans::report
