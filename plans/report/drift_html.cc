// One self-contained HTML page (inline CSS, no script, nothing fetched): an auditor opens it from
// a CI artifact. Top: a rack x node heat map; below: a table per node of what differs.
#include <map>

#include <fmt/format.h>

#include "plans/plan/findings.h"
#include "plans/report/drift_render.h"
#include "plans/report/facts_age.h"
#include "plans/report/rows.h"

namespace plumb::plans::report {
namespace {

const char* kDriftStyle = R"(body{font-family:sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}
.meta{color:#555;margin-bottom:12px}
.verdict{display:inline-block;padding:4px 10px;border-radius:4px;color:#fff;font-weight:bold}
.v-in_sync{background:#1a9641}.v-drift{background:#d7191c}.v-partial{background:#7b3294}.v-error{background:#000}
.map{border-collapse:separate;border-spacing:4px;margin:12px 0}
.map th{text-align:right;padding-right:8px;font-weight:normal;color:#555}
.cell{width:96px;height:44px;text-align:center;vertical-align:middle;font-size:12px;border-radius:3px}
.s-ok{background:#1a9641;color:#fff}.s-drift{background:#d7191c;color:#fff}
.s-waived{background:#fdae61;color:#222}.s-unread{background:#9e9e9e;color:#fff}
.legend span{display:inline-block;padding:2px 8px;margin-right:6px;border-radius:3px}
table.nodes{border-collapse:collapse;margin-top:16px}
table.nodes td,table.nodes th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top;font-size:13px}
code{font-size:12px})";

enum class CellState { kOk, kDrift, kWaived, kUnread };

CellState StateOf(const DriftNode& n) {
  if (!n.readable) return CellState::kUnread;
  if (n.Count(DriftStatus::kDrift) > 0) return CellState::kDrift;
  if (n.Count(DriftStatus::kWaived) > 0) return CellState::kWaived;
  return CellState::kOk;
}

const char* ClassOf(CellState s) {
  switch (s) {
    case CellState::kOk: return "s-ok";
    case CellState::kDrift: return "s-drift";
    case CellState::kWaived: return "s-waived";
    case CellState::kUnread: return "s-unread";
  }
  return "s-ok";
}

const char* WordOf(CellState s) {
  switch (s) {
    case CellState::kOk: return "in sync";
    case CellState::kDrift: return "drift";
    case CellState::kWaived: return "waived";
    case CellState::kUnread: return "unreadable";
  }
  return "";
}

}  // namespace

std::string DriftToHtml(const DriftReport& r) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>plumb drift: {0}</title><style>{1}</style></head><body>\n"
      "<h1>plumb drift: {0}</h1>\n"
      "<div class=\"meta\">commit <code>{2}</code> (ref {3}) &middot; {4} &middot; {11}</div>\n"
      "<div><span class=\"verdict v-{5}\">{5}</span> {6} of {7} node(s) drifted ({8} key(s)), "
      "{9} key(s) waived, {10} node(s) unreadable</div>\n",
      HtmlEscape(r.cluster), kDriftStyle, HtmlEscape(r.source.commit), HtmlEscape(r.source.ref),
      HtmlEscape(r.created_at), DriftVerdictName(r.verdict), r.drifted_nodes, r.nodes.size(),
      r.drift_keys, r.waived_keys, r.unreadable_nodes,
      HtmlEscape(GatheredText(r.gathered_at, r.created_at)));
  out += "<div class=\"legend\"><span class=\"s-ok\">in sync</span><span class=\"s-drift\">drift"
         "</span><span class=\"s-waived\">waived</span><span class=\"s-unread\">unreadable</span>"
         "</div>\n";

  std::map<std::string, std::vector<const DriftNode*>> racks;
  for (const DriftNode& n : r.nodes) racks[n.rack].push_back(&n);
  out += "<table class=\"map\" aria-label=\"rack by node heat map\">\n";
  for (const auto& [rack, members] : racks) {
    out += fmt::format("<tr><th scope=\"row\">{}</th>", rack.empty() ? "(no rack)" : HtmlEscape(rack));
    for (const DriftNode* n : members) {
      CellState s = StateOf(*n);
      out += fmt::format("<td class=\"cell {}\" title=\"{}: {}, {} drifted, {} waived\">{}</td>",
                         ClassOf(s), HtmlEscape(n->node), WordOf(s), n->Count(DriftStatus::kDrift),
                         n->Count(DriftStatus::kWaived), HtmlEscape(n->node));
    }
    out += "</tr>\n";
  }
  out += "</table>\n";

  out += "<table class=\"nodes\"><thead><tr><th>node</th><th>rack</th><th>state</th>"
         "<th>what differs (live &rarr; pinned); health findings</th></tr></thead><tbody>\n";
  for (const DriftNode& n : r.nodes) {
    CellState s = StateOf(n);
    std::string what;
    if (!n.readable) what = HtmlEscape(n.unreadable_reason);
    for (const DriftCheck& c : n.checks) {
      if (!c.Differs()) continue;
      what += fmt::format("<div><code>{}</code>: {} &rarr; {} ({}{}){}{}</div>",
                          HtmlEscape(RowName(c.key(), c.member)),
                          HtmlEscape(ShowValue(c.observed)), HtmlEscape(ShowValue(c.desired())),
                          c.status == DriftStatus::kWaived ? "waived: " : "",
                          c.status == DriftStatus::kWaived ? HtmlEscape(c.waiver->reason)
                                                           : ChangeReasonName(c.reason),
                          c.origin().known() ? " <code>" + HtmlEscape(c.origin().ToString()) + "</code>"
                                           : "",
                          c.why.empty() ? "" : "<br>why: " + HtmlEscape(c.why));
    }
    for (const Finding& f : n.findings)
      what += fmt::format("<div class=\"finding\">{} health: {}</div>",
                          f.check.status == modules::CheckStatus::kFail ? "&#x2717;" : "&#x26A0;",
                          HtmlEscape(FindingText(f.check)));
    out += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>\n",
                       HtmlEscape(n.node), HtmlEscape(n.rack), ClassOf(s), WordOf(s), what);
  }
  out += "</tbody></table>\n";
  if (!r.diags.empty()) {
    out += "<h2>Diagnostics</h2><ul>\n";
    for (const Diagnostic& d : r.diags.items())
      out += "<li>" + HtmlEscape(d.ToString()) + "</li>\n";
    out += "</ul>\n";
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace plumb::plans::report
