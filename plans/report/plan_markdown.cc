#include "plans/report/plan_markdown.h"

#include <map>

#include <fmt/format.h>

#include "plans/plan/stack_counts.h"

#include "inventory/hostlist.h"
#include "plans/core/duration_text.h"
#include "plans/plan/findings.h"
#include "plans/report/drift_render.h"
#include "plans/report/facts_age.h"
#include "plans/report/groups.h"
#include "plans/report/plan_text.h"
#include "plans/report/rows.h"

namespace plumb::plans::report {
namespace {

// Text outside code spans (a reason, an owner): no markup from it survives.
std::string MdText(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '`': case '*': case '_': case '[': case ']': case '\\': case '#': case '@':
        out += '\\';
        out += c;
        break;
      case '\n': case '\r': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

std::string MarkdownNames(const std::vector<std::string>& names) {
  std::string list = MarkdownCell(inventory::CompressHostlist(names));
  return names.size() > 1 ? fmt::format("{} ({} nodes)", list, names.size()) : list;
}

// The same inside HTML (a <summary>), where markdown is not read.
std::string HtmlNames(const std::vector<std::string>& names) {
  std::string list = "<code>" + HtmlEscape(inventory::CompressHostlist(names)) + "</code>";
  return names.size() > 1 ? fmt::format("{} ({} nodes)", list, names.size()) : list;
}

// One part of the comment: a heading and its items, cut at an item when space runs out.
struct Section {
  std::string head;                  ///< "#### Batches\n\n| ... |\n|---|\n"
  std::vector<std::string> items;    ///< one row or block each, ending with a newline
  std::string tail;                  ///< after the items ("\n")
  std::string what;                  ///< "batches", for "... 12 more batches not shown"
};

// A row per member of the action (each named), and why it is wanted when the values do not say.
std::string ActionRow(const PlannedAction& pa) {
  const modules::Action& a = pa.action;
  std::string out;
  for (const ChangeRow& r : RowsOf(a)) {
    const char symbol = r.before.is_null() ? '+' : r.after.is_null() ? '-' : '~';
    out += fmt::format("| {} | {} | {} | {} | {} | {}{} | {} |\n", symbol,
                       MarkdownCell(RowName(r.key, r.member)), MarkdownCell(ShowValue(r.before)),
                       MarkdownCell(ShowValue(r.after)), modules::DisruptionName(a.disruption),
                       ChangeReasonName(pa.reason), r.why.empty() ? "" : ": " + MdText(r.why),
                       pa.origin.known() ? MarkdownCell(pa.origin.ToString()) : "");
  }
  return out;
}

std::string WaivedRow(const std::string& nodes, const WaivedChange& w) {
  const modules::Action& a = w.change.action;
  return fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", nodes, MarkdownCell(a.key),
                     MarkdownCell(ShowValue(a.before)), MarkdownCell(ShowValue(a.after)),
                     w.expires.empty() ? "revoked" : MdText(w.expires), MdText(w.reason),
                     MdText(w.owner));
}

std::string SummaryLine(const Plan& plan) { return "**" + MdText(SummaryText(plan)) + "**"; }

std::string FindingRow(const std::string& nodes, const Finding& f) {
  const modules::CheckResult& c = f.check;
  return fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", nodes,
                     c.status == modules::CheckStatus::kFail ? "fail" : "warn", MarkdownCell(c.module),
                     MdText(c.name), c.subject.empty() ? "" : MarkdownCell(c.subject),
                     MarkdownCell(c.measured.is_null() ? "not measured" : ShowValue(c.measured)),
                     MarkdownCell(ThresholdText(c.threshold)), MdText(c.message));
}

std::vector<Section> Sections(const Plan& plan) {
  std::vector<Section> out;
  if (plan.HasApplicable()) {
    Section d{"#### Disruption\n\n| disruption | nodes |\n|---|---|\n", {}, "\n", "disruption rows"};
    for (const DisruptionRow& r : DisruptionRows(plan))
      d.items.push_back(fmt::format("| {} | {} |\n", r.label, MarkdownNames(r.nodes)));
    out.push_back(std::move(d));

    Section b{"#### Batches\n\n| # | | nodes | est. | rollout | domains |\n|---|---|---|---|---|---|\n",
              {}, "", "batches"};
    for (const Batch& x : plan.batches)
      b.items.push_back(fmt::format("| {} | {} | {} | ~{} | {} | {} |\n", x.index + 1,
                                    x.canary ? "canary" : "", MarkdownNames(x.nodes),
                                    FormatDuration(x.est_seconds), MarkdownCell(x.rollout),
                                    x.domains.empty() ? "" : MarkdownCell(inventory::CompressHostlist(x.domains))));
    b.tail = fmt::format("\n**Peak nodes out at once:** {} (nodes already drained or down "
                         "included) · **Estimated duration:** {} (batches in sequence; waits for "
                         "running jobs not included)\n\n",
                         plan.peak_unavailable, FormatDuration(plan.est_seconds));
    out.push_back(std::move(b));
  }
  if (!plan.stacks.empty()) {
    Section st{"#### Stacks\n\nNodes the schedulers show on each stack (`--constraint=stack_<name>`, "
               "label `plumb.dev/stack`):\n\n| stack | now | after | jobs that would never run |\n"
               "|---|---|---|---|\n", {}, "\n", "stacks"};
    for (const StackCount& c : plan.stacks)
      st.items.push_back(fmt::format("| {} | {} | {} | {} |\n", MarkdownCell(c.stack), c.now, c.after,
                                     c.stranded.empty() ? "" : "**" + MdText(StrandedText(c)) + "**"));
    out.push_back(std::move(st));
  }
  if (!plan.blocking_jobs.empty()) {
    Section j{"#### Jobs that block a drain now\n\n", {}, "\n", "nodes with blocking jobs"};
    for (const BlockingJobs& bj : plan.blocking_jobs) {
      std::string jobs;
      for (size_t i = 0; i < bj.jobs.size(); ++i) jobs += (i ? ", " : "") + MdText(bj.jobs[i]);
      j.items.push_back(fmt::format("- {}: {}\n", MarkdownCell(bj.node), jobs));
    }
    out.push_back(std::move(j));
  }
  {
    std::vector<std::string> admin;
    std::map<std::string, std::vector<std::string>> held, left;
    for (const NodePlan& n : plan.nodes) {
      if (n.admin_drained) admin.push_back(n.node);
      if (!n.held_by_run.empty()) held[n.held_by_run].push_back(n.node);
      if (!n.left_by_run.empty())
        left[fmt::format("run {}, failed at {}", n.left_by_run, n.left_at_step)].push_back(n.node);
    }
    Section s{"#### Nodes already out\n\n", {}, "\n", "notes"};
    if (!admin.empty())
      s.items.push_back(fmt::format("- drained by an admin (plumb leaves them drained): {}\n", MarkdownNames(admin)));
    for (const auto& [run, names] : held)
      s.items.push_back(fmt::format("- held by plumb run {} (still working on them; apply leaves "
                                    "them alone): {}\n", MarkdownCell(run), MarkdownNames(names)));
    for (const auto& [why, names] : left)
      s.items.push_back(fmt::format("- left drained by {}: {}; this plan takes them over\n",
                                    MdText(why), MarkdownNames(names)));
    if (!s.items.empty()) out.push_back(std::move(s));
  }
  if (plan.HasChanges()) {
    // Nodes whose changes are identical: one block under one host list.
    Section c{"#### Changes\n\n", {}, "", "node groups"};
    GroupsInOrder<const NodePlan*> groups;
    for (const NodePlan& n : plan.nodes) {
      std::string sig = n.rollout + (n.return_to_service ? "\nreturn" : "") +
                        (n.skipped_unhealthy ? "\nskipped" : "");
      for (const PlannedAction& pa : n.actions) sig += "\n" + ActionRow(pa);
      groups.Add(sig, &n);
    }
    for (const auto& [sig, members] : groups.groups()) {
      std::vector<std::string> names;
      for (const NodePlan* n : members) names.push_back(n->node);
      const NodePlan& first = *members.front();
      std::string block = fmt::format(
          "<details><summary>{} — {}{}</summary>\n\n", HtmlNames(names),
          first.return_to_service ? "return to service (left drained by a failed run)"
                                  : modules::DisruptionName(first.disruption),
          first.skipped_unhealthy
              ? fmt::format(" — <b>skipped: unhealthy</b> (rollout {}: unhealthy: skip)",
                            HtmlEscape(first.rollout))
              : "");
      if (!first.actions.empty()) {
        block += "| | key | now | wanted | disruption | reason | pinned at |\n"
                 "|---|---|---|---|---|---|---|\n";
        for (const PlannedAction& pa : first.actions) block += ActionRow(pa);
      } else {
        block += "No change left: verify, run the health gates, return to service.\n";
      }
      block += "\n</details>\n\n";
      c.items.push_back(std::move(block));
    }
    out.push_back(std::move(c));
  }
  if (!plan.waived.empty()) {
    Section w{"#### Waived (left as they are)\n\n| nodes | key | now | wanted | until | reason | owner |\n"
              "|---|---|---|---|---|---|---|\n",
              {}, "\n", "waived keys"};
    GroupsInOrder<std::string> by_row;
    for (const NodeWaived& nw : plan.waived)
      for (const WaivedChange& c : nw.changes) by_row.Add(WaivedRow("", c), nw.node);
    for (const auto& [row, names] : by_row.groups())
      w.items.push_back("| " + MarkdownNames(names) + " " + row.substr(2));
    out.push_back(std::move(w));
  }
  if (!plan.health.empty()) {
    // Findings, not changes: what the nodes' health checks found against the stack's thresholds.
    Section h{"#### Health (findings, not changes: nothing here is applied)\n\n"
              "| nodes | | module | check | subject | measured | allowed | why |\n"
              "|---|---|---|---|---|---|---|---|\n",
              {}, "\n", "health findings"};
    GroupsInOrder<std::string> by_row;
    for (const NodeFindings& nf : plan.health)
      for (const Finding& f : nf.findings) by_row.Add(FindingRow("", f), nf.node);
    for (const auto& [row, names] : by_row.groups())
      h.items.push_back("| " + MarkdownNames(names) + row.substr(2));
    if (const std::string skipped = SkippedUnhealthyNote(plan); !skipped.empty())
      h.tail = "\n" + MdText("Not applied: " + skipped) + "\n\n";
    out.push_back(std::move(h));
  }
  if (!plan.unreadable.empty()) {
    Section u{"#### Unreadable, not planned — PLAN INCOMPLETE\n\n", {}, "\n", "unreadable groups"};
    std::map<std::string, std::vector<std::string>> by_reason;
    for (const UnreadableNode& x : plan.unreadable) by_reason[x.reason].push_back(x.node);
    for (const auto& [reason, names] : by_reason)
      u.items.push_back(fmt::format("- {}: {}\n", MarkdownNames(names), MdText(reason)));
    out.push_back(std::move(u));
  }
  if (!plan.diags.empty()) {
    Section f{"#### Diagnostics\n\n", {}, "\n", "diagnostics"};
    for (const Diagnostic& d : plan.diags.items())
      f.items.push_back(fmt::format("- {}\n", MdText(d.ToString())));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::string MarkdownCell(std::string_view s) {
  std::string out = "`";
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '`') out += "'";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out + "`";
}

std::string PlanToMarkdown(const Plan& plan, const MarkdownOptions& o) {
  std::string out = fmt::format("### plumb plan: cluster {} at {}{} (ref {})\n\n{}\n\n{}\n\n",
                                MarkdownCell(plan.cluster), MarkdownCell(plan.source.commit.substr(0, 12)),
                                plan.source.working_tree ? " + **UNCOMMITTED EDITS**" : "",
                                MarkdownCell(plan.source.ref), SummaryLine(plan),
                                MdText("Plan made " + plan.created_at + "; " +
                                       GatheredText(plan.gathered_at, plan.created_at) + "."));
  for (const std::string& n : o.notes) out += "> " + MdText(n) + "\n";
  if (!o.notes.empty()) out += "\n";
  const std::string footer =
      fmt::format("<sub>plan digest {} · made {} · the whole plan: {}</sub>\n",
                  plan.digest.empty() ? "(not sealed)" : MarkdownCell(plan.digest),
                  MdText(plan.created_at), o.artefact);
  auto cut_note = [&](size_t n, const std::string& what) {
    return fmt::format("\n_… {} more {} not shown (the comment limit is {} characters): see "
                       "{}._\n\n", n, what, o.max_chars, o.artefact);
  };
  // The longest cut note a section can need, kept free until the last section is placed.
  const size_t reserve = footer.size() + cut_note(999999999, "unreadable groups").size() +
                         fmt::format("**Truncated**: {} section(s) not shown.\n", 99).size();
  const std::vector<Section> sections = Sections(plan);
  bool truncated = false;
  size_t skipped_sections = 0;
  for (const Section& s : sections) {
    if (truncated) {
      ++skipped_sections;
      continue;
    }
    if (out.size() + s.head.size() + reserve > o.max_chars) {
      truncated = true;
      ++skipped_sections;
      continue;
    }
    out += s.head;
    size_t i = 0;
    for (; i < s.items.size(); ++i) {
      if (out.size() + s.items[i].size() + s.tail.size() + reserve > o.max_chars) break;
      out += s.items[i];
    }
    if (i < s.items.size()) {
      out += cut_note(s.items.size() - i, s.what);
      truncated = true;
      continue;
    }
    out += s.tail;
  }
  if (skipped_sections)
    out += fmt::format("**Truncated**: {} section(s) not shown.\n", skipped_sections);
  // Only a header longer than the limit (notes of megabytes) gets here; never over the limit.
  if (out.size() + footer.size() > o.max_chars && o.max_chars > footer.size() + 16)
    out = out.substr(0, o.max_chars - footer.size() - 16) + "\n_(cut)_\n\n";
  out += footer;
  return out;
}

}  // namespace plumb::plans::report
