#include "plans/report/audit_export.h"

#include <map>
#include <regex>

#include <fmt/format.h>

#include "plans/report/drift_render.h"
#include "plans/store/step_name.h"

namespace plumb::plans::report {
namespace {

using nlohmann::json;

// The step that carried out a planned action: "apply:<action id>".
const StepRecord* StepFor(const AuditRun& r, const std::string& node, const std::string& step) {
  const StepRecord* last = nullptr;
  for (const StepRecord& s : r.steps)
    if (s.node == node && s.step == step) last = &s;   // the last attempt says how it ended
  return last;
}

std::string StepOutcomeText(const StepRecord* s) {
  if (!s) return "not run";
  return s->outcome == StepState::kNone ? "no outcome (interrupted)" : std::string(Name(s->outcome));
}

json NodeEntry(const AuditRun& r, const NodeRecord& n) {
  json changes = json::array();
  if (auto pn = r.plan_nodes.find(n.node); pn != r.plan_nodes.end())
    for (const json& a : *pn) {
      const std::string id = a.value("id", "");
      changes.push_back({{"key", a.value("key", "")},
                         {"before", a.value("before", json())},
                         {"after", a.value("after", json())},
                         {"disruption", a.value("disruption", "")},
                         {"outcome", StepOutcomeText(StepFor(r, n.node, StepName::Apply(id).Text()))}});
    }
  json steps = json::array();
  for (const StepRecord& s : r.steps)
    if (s.node == n.node)
      steps.push_back({{"step", s.step}, {"outcome", s.outcome == StepState::kNone ? std::string("no outcome")
                                                                   : std::string(Name(s.outcome))},
                       {"started_at", s.started_at}, {"ended_at", s.ended_at}, {"error", s.error}});
  return {{"run", r.run.id},
          {"cluster", r.run.cluster},
          {"status", n.status},
          {"run_outcome", r.run.outcome},
          {"started_at", n.started_at.empty() ? r.run.started_at : n.started_at},
          {"ended_at", n.ended_at},
          {"commit", r.run.commit},
          {"plan_commit", r.run.plan_commit.empty() ? r.run.commit : r.run.plan_commit},
          {"plan_digest", r.run.plan_digest},
          {"who", r.run.who.ToJson()},
          {"error", n.error},
          {"changes", std::move(changes)},
          {"steps", std::move(steps)}};
}

std::string Esc(std::string_view s) { return HtmlEscape(s); }

std::string WhoHtml(const RunWho& w) {
  std::string out;
  auto row = [&](const char* label, const std::string& v) {
    if (!v.empty()) out += fmt::format("<div><b>{}</b> {}</div>", label, Esc(v));
  };
  row("operator", w.operator_user);
  row("login", w.login_user);
  if (!w.ci.empty()) row("CI", w.ci + (w.ci_actor.empty() ? "" : " · " + w.ci_actor));
  row("job", w.ci_job);
  row("approved by", w.approver.empty() ? std::string("(none recorded)") : w.approver);
  row("author", w.author);
  row("committer", w.committer);
  row("signature", w.signer);
  return out;
}

}  // namespace

Status CheckSince(const std::string& since) {
  static const std::regex kDate(R"(^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?)?$)");
  if (std::regex_match(since, kDate)) return OkStatus();
  return Diagnostic::Error("audit.since", fmt::format("--since '{}' is not a date", since), {},
                           "--since", "give YYYY-MM-DD (UTC) or an RFC 3339 time such as "
                                      "2026-11-30T22:00:00Z");
}

Result<AuditData> CollectAudit(Journal& journal, const std::string& since,
                               const std::string& journal_path, const std::string& now) {
  AuditData a;
  a.since = since;
  a.generated_at = now;
  a.journal = journal_path;
  auto chain = journal.VerifyChain();
  if (!chain) return chain.error();
  a.chain = std::move(chain.value());
  auto runs = journal.ListRuns(1 << 30);
  if (!runs) return runs.error();
  // Times are RFC 3339 UTC with milliseconds: as strings they sort as times once a trailing
  // "Z" is dropped from `since` ("...:00Z" would sort after "...:00.123Z").
  std::string from = since;
  if (!from.empty() && from.back() == 'Z') from.pop_back();
  for (auto it = runs->rbegin(); it != runs->rend(); ++it) {   // oldest first
    if (it->started_at < from) continue;   // "2026-11-30" sorts before any time that day
    AuditRun r;
    r.run = *it;
    auto plan = json::parse(r.run.plan_json, nullptr, false);
    r.run.plan_json.clear();
    if (plan.is_object() && plan.contains("nodes") && plan["nodes"].is_array())
      for (const json& n : plan["nodes"])
        if (n.is_object()) r.plan_nodes[n.value("node", "")] = n.value("actions", json::array());
    auto nodes = journal.Nodes(r.run.id);
    if (!nodes) return nodes.error();
    r.nodes = std::move(nodes.value());
    auto steps = journal.Steps(r.run.id);
    if (!steps) return steps.error();
    r.steps = std::move(steps.value());
    a.runs.push_back(std::move(r));
  }
  return a;
}

json AuditToJson(const AuditData& a) {
  std::map<std::string, json> by_node;
  for (const AuditRun& r : a.runs)
    for (const NodeRecord& n : r.nodes) {
      json& entry = by_node[n.node];
      if (entry.is_null()) entry = json::array();
      entry.push_back(NodeEntry(r, n));
    }
  json nodes = json::array();
  for (auto& [node, applied] : by_node) nodes.push_back({{"node", node}, {"applied", applied}});
  return {{"format", "plumb.audit/v1"},
          {"generated_at", a.generated_at},
          {"since", a.since},
          {"journal", a.journal},
          {"chain", {{"head", a.chain.head}, {"entries", a.chain.entries},
                     {"adopted", a.chain.adopted}, {"verified", a.chain.ok()},
                     {"problems", a.chain.problems}}},
          {"nodes", std::move(nodes)}};
}

std::string AuditToHtml(const AuditData& a) {
  const json j = AuditToJson(a);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>plumb audit export</title><style>"
      "body{font-family:sans-serif;margin:24px;color:#222}"
      ".banner{padding:16px 20px;color:#fff;font-size:18px;margin-bottom:20px}"
      ".ok{background:#1a9641}.bad{background:#d7191c}"
      "table{border-collapse:collapse;width:100%;margin-bottom:24px}"
      "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;font-size:13px}"
      "th{background:#eee;text-align:left}code{font-size:12px}"
      ".done{color:#1a9641}.failed{color:#d7191c}"
      "</style></head><body>\n";
  out += fmt::format("<h1>plumb audit export</h1><p>Runs since <b>{}</b>, from journal "
                     "<code>{}</code>, generated {}.</p>\n",
                     Esc(a.since), Esc(a.journal), Esc(a.generated_at));
  out += fmt::format(
      "<div class=\"banner {}\" id=\"chain\">{} &mdash; {} chain entries, head "
      "<code>{}</code></div>\n",
      a.chain.ok() ? "ok" : "bad",
      a.chain.ok() ? "Journal verified: every row matches its hash chain"
                   : fmt::format("JOURNAL DOES NOT VERIFY: {} problem(s)", a.chain.problems.size()),
      a.chain.entries, Esc(a.chain.head.empty() ? "(empty)" : a.chain.head));
  if (!a.chain.ok()) {
    out += "<ul id=\"problems\">";
    for (const std::string& p : a.chain.problems) out += "<li>" + Esc(p) + "</li>";
    out += "</ul>\n";
  }
  if (j["nodes"].empty()) out += "<p>No run touched any node in this period.</p>\n";
  for (const json& n : j["nodes"]) {
    out += fmt::format("<h2 id=\"node-{0}\">{0}</h2>\n<table><tr><th>when</th><th>run</th>"
                       "<th>commit</th><th>status</th><th>changes</th><th>who</th></tr>\n",
                       Esc(n.value("node", "")));
    for (const json& r : n["applied"]) {
      std::string changes;
      for (const json& c : r["changes"])
        changes += fmt::format("<div><code>{}</code>: {} &rarr; {} <i>({})</i></div>",
                               Esc(c.value("key", "")), Esc(ShowValue(c["before"])),
                               Esc(ShowValue(c["after"])), Esc(c.value("outcome", "")));
      if (changes.empty()) changes = "<i>no change planned (returned to service)</i>";
      std::string commit = fmt::format("<code>{}</code>", Esc(r.value("commit", "")));
      if (r.value("plan_commit", "") != r.value("commit", ""))
        commit += fmt::format("<div>plan reviewed at <code>{}</code></div>", Esc(r.value("plan_commit", "")));
      const std::string status = r.value("status", "");
      out += fmt::format(
          "<tr><td>{}<br>{}</td><td><code>{}</code></td><td>{}</td><td class=\"{}\">{}{}</td>"
          "<td>{}</td><td>{}</td></tr>\n",
          Esc(r.value("started_at", "")), Esc(r.value("ended_at", "")), Esc(r.value("run", "")),
          commit, status == "done" ? "done" : status == "failed" ? "failed" : "", Esc(status),
          r.value("error", "").empty() ? "" : "<div>" + Esc(r.value("error", "")) + "</div>",
          changes, WhoHtml(RunWho::FromJson(r["who"])));
    }
    out += "</table>\n";
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace plumb::plans::report
