// Text and JSON renderings of a drift report.
#include <map>

#include <fmt/format.h>

#include "plans/report/drift_render.h"
#include "inventory/hostlist.h"
#include "plans/plan/findings.h"
#include "plans/report/facts_age.h"
#include "plans/core/json_text.h"
#include "plans/report/groups.h"
#include "plans/report/ordered_render.h"
#include "plans/report/rows.h"

namespace plumb::plans::report {
namespace {

std::string ShortCommit(const std::string& c) { return c.substr(0, 12); }

std::string CheckLine(const DriftCheck& c) {
  std::string line;
  const std::string name = RowName(c.key(), c.member);
  if (c.status == DriftStatus::kWaived) {
    line = fmt::format("  = {}: {} (want {})  waived: {} (owner {}, until {})", name,
                       ShowValue(c.observed), ShowValue(c.desired()), c.waiver->reason,
                       c.waiver->owner, c.waiver->expires);
  } else {
    line = fmt::format("  ~ {}: {} -> {}  ({})", name, ShowValue(c.observed), ShowValue(c.desired()),
                       ChangeReasonName(c.reason));
    if (c.waiver && c.waiver->expired)
      line += fmt::format("  [waiver expired {}]", c.waiver->expires);
  }
  if (c.origin().known()) line += "  " + c.origin().ToString();
  if (!c.why.empty()) line += "\n      why: " + c.why;
  return line;
}

// A node's findings as lines (the same lines for nodes with the same findings).
std::string FindingLines(const std::vector<Finding>& findings, const char* indent) {
  std::string out;
  for (const Finding& f : findings) {
    out += fmt::format("{}{} {}", indent, f.check.status == modules::CheckStatus::kFail ? "!" : "?",
                       FindingText(f.check));
    if (f.origin.known()) out += "  " + f.origin.ToString();
    out += "\n";
  }
  return out;
}

// What makes two nodes print the same: their differing checks and their unread reason.
std::string Signature(const DriftNode& n) {
  std::string s = n.readable ? "R" : "U" + n.unreadable_reason;
  for (const DriftCheck& c : n.checks) {
    if (!c.Differs()) continue;
    s += '\n';
    s += CheckLine(c);
  }
  return s;
}

}  // namespace

std::string ShowValue(const nlohmann::json& v) {
  if (v.is_null()) return "(absent)";
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string DriftToText(const DriftReport& r) {
  std::string out = fmt::format("plumb drift: cluster {} at {}{} ({})\n{}\n", r.cluster,
                                ShortCommit(r.source.commit),
                                r.source.working_tree ? " + uncommitted edits" : "",
                                r.created_at, GatheredText(r.gathered_at, r.created_at));
  // Group nodes that differ in exactly the same way; in-sync nodes are only counted.
  GroupsInOrder<const DriftNode*> groups;
  int in_sync = 0, unchecked = 0;
  for (const DriftNode& n : r.nodes) {
    unchecked += n.Count(DriftStatus::kUnchecked);
    if (n.readable && n.Count(DriftStatus::kDrift) == 0 && n.Count(DriftStatus::kWaived) == 0) {
      ++in_sync;
      continue;
    }
    groups.Add(Signature(n), &n);
  }
  for (const auto& [sig, members] : groups.groups()) {
    std::vector<std::string> names;
    for (const DriftNode* n : members) names.push_back(n->node);
    std::string head = inventory::CompressHostlist(names);
    if (members.size() > 1) head += fmt::format(" ({} nodes)", members.size());
    const DriftNode& n = *members.front();
    out += "\n";
    if (!n.readable) {
      out += fmt::format("! {}: unreadable: {}\n", head, n.unreadable_reason);
      continue;
    }
    out += fmt::format("{} {}: {} drifted, {} waived\n", n.Drifted() ? "~" : "=", head,
                       n.Count(DriftStatus::kDrift), n.Count(DriftStatus::kWaived));
    for (const DriftCheck& c : n.checks)
      if (c.Differs()) out += CheckLine(c) + "\n";
  }
  // Health findings: what the node's checks found against the stack's thresholds. Not drift
  // (nothing is pinned there to converge), so not in the verdict; nodes alike share a block.
  {
    GroupsInOrder<std::string> by_findings;
    for (const DriftNode& n : r.nodes)
      if (!n.findings.empty()) by_findings.Add(FindingLines(n.findings, "    "), n.node);
    if (!by_findings.empty())
      out += "\nHealth (findings, not drift: the verdict does not count them):\n";
    for (const auto& [lines, names] : by_findings.groups()) {
      std::string head = inventory::CompressHostlist(names);
      if (names.size() > 1) head += fmt::format(" ({} nodes)", names.size());
      out += fmt::format("  {}:\n{}", head, lines);
    }
  }
  if (!r.diags.empty()) out += "\n" + r.diags.ToText();
  const int total = static_cast<int>(r.nodes.size());
  out += fmt::format(
      "\nVerdict: {}: {} of {} node(s) drifted ({} key(s)), {} key(s) waived, {} node(s) "
      "unreadable, {} in sync",
      r.verdict == DriftVerdict::kInSync  ? "IN SYNC"
      : r.verdict == DriftVerdict::kDrift ? "DRIFT"
      : r.verdict == DriftVerdict::kPartial ? "PARTIAL (some nodes unreadable)"
                                            : "ERROR",
      r.drifted_nodes, total, r.drift_keys, r.waived_keys, r.unreadable_nodes, in_sync);
  if (unchecked > 0) out += fmt::format("; {} key check(s) not run (no module for them)", unchecked);
  if (r.findings > 0)
    out += fmt::format("; health: {} node(s) unhealthy, {} finding(s)", r.unhealthy_nodes, r.findings);
  out += "\n";
  return out;
}

namespace {

nlohmann::json LocationJson(const Location& l) {
  if (!l.known()) return nullptr;
  return {{"file", l.file}, {"line", l.line}, {"column", l.column}};
}

nlohmann::json CheckJson(const DriftCheck& c) {
  nlohmann::json cj = {{"key", c.key()}, {"pointer", c.pointer()}, {"module", c.module()},
                       {"status", DriftStatusName(c.status)}, {"desired", c.desired()},
                       {"origin", LocationJson(c.origin())}};
  if (c.Differs()) {
    cj["observed"] = c.observed;
    cj["reason"] = ChangeReasonName(c.reason);
    cj["disruption"] = modules::DisruptionName(c.disruption);
    cj["summary"] = c.summary;
    if (!c.member.empty()) cj["member"] = c.member;
    if (!c.why.empty()) cj["why"] = c.why;
  }
  if (c.waiver)
    cj["waiver"] = {{"nodes", c.waiver->nodes}, {"keys", c.waiver->keys},
                    {"reason", c.waiver->reason}, {"owner", c.waiver->owner},
                    {"expires", c.waiver->expires}, {"expired", c.waiver->expired},
                    {"origin", LocationJson(c.waiver->where)}};
  return cj;
}

// A node without its checks ("checks": []).
nlohmann::json DriftFindingJson(const Finding& f) {
  nlohmann::json j = f.check.ToJson();
  j["origin"] = LocationJson(f.origin);
  return j;
}

nlohmann::json NodeFrame(const DriftNode& n) {
  nlohmann::json nj = {{"node", n.node}, {"rack", n.rack}, {"readable", n.readable},
                       {"drift", n.Count(DriftStatus::kDrift)},
                       {"waived", n.Count(DriftStatus::kWaived)},
                       {"marker_commit", n.marker_commit}, {"checks", nlohmann::json::array()}};
  if (!n.readable) nj["unreadable_reason"] = n.unreadable_reason;
  // Health findings: beside the checks, never among them (they are not drift).
  if (!n.findings.empty()) {
    nlohmann::json& f = nj["findings"] = nlohmann::json::array();
    for (const Finding& x : n.findings) f.push_back(DriftFindingJson(x));
    nj["unhealthy"] = n.Unhealthy();
  }
  return nj;
}

nlohmann::json NodeJson(const DriftNode& n) {
  nlohmann::json nj = NodeFrame(n);
  nlohmann::json& checks = nj["checks"];
  for (const DriftCheck& c : n.checks) checks.push_back(CheckJson(c));
  return nj;
}

// dump(), with bytes that are not UTF-8 (an SSH error's text, say) written as U+FFFD rather
// than thrown after half the report is out.
std::string Compact(const nlohmann::json& v) {
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A check that does not differ and has no waiver reads the same on every node sharing its
// subject: its text is made once.
using PlainCheckTexts = std::map<std::pair<const CheckSubject*, DriftStatus>, std::string>;

bool Plain(const DriftCheck& c) { return !c.Differs() && !c.waiver; }

PlainCheckTexts MakePlainCheckTexts(const DriftReport& r) {
  PlainCheckTexts texts;
  for (const DriftNode& n : r.nodes)
    for (const DriftCheck& c : n.checks)
      if (Plain(c))
        if (auto [it, fresh] = texts.try_emplace({c.subject.get(), c.status}); fresh)
          it->second = Compact(CheckJson(c));
  return texts;
}

// One node as NodeJson(n).dump() writes it: the frame's text with the checks spliced in where
// its empty array is (`"checks":[]` cannot occur inside a string: dump escapes the quotes).
void AppendNodeLine(std::string& out, const DriftNode& n, const PlainCheckTexts& plain) {
  const std::string frame = Compact(NodeFrame(n));
  const std::string_view empty = "\"checks\":[]";
  const size_t at = frame.find(empty);
  if (n.checks.empty() || at == std::string::npos) {
    out += frame;
    return;
  }
  out.append(frame, 0, at + empty.size() - 1);   // up to and with the '['
  bool first = true;
  for (const DriftCheck& c : n.checks) {
    if (!first) out += ',';
    first = false;
    if (Plain(c)) out += plain.at({c.subject.get(), c.status});
    else out += Compact(CheckJson(c));
  }
  out.append(frame, at + empty.size() - 1, std::string::npos);   // the ']' and the rest
}

// Everything but the nodes.
nlohmann::json ReportTop(const DriftReport& r) {
  const auto age = FactsAgeSeconds(r.gathered_at, r.created_at);
  return {{"format_version", 1},
          {"source", {{"repo", r.source.repo}, {"ref", r.source.ref}, {"commit", r.source.commit},
                      {"working_tree", r.source.working_tree}}},
          {"cluster", r.cluster},
          {"created_at", r.created_at},
          {"gathered_at", r.gathered_at},
          {"facts_age_s", age ? nlohmann::json(*age) : nlohmann::json()},
          {"verdict", DriftVerdictName(r.verdict)},
          {"exit_code", DriftExitCode(r)},
          {"summary", {{"nodes", r.nodes.size()}, {"drifted_nodes", r.drifted_nodes},
                       {"drift_keys", r.drift_keys}, {"waived_keys", r.waived_keys},
                       {"unreadable_nodes", r.unreadable_nodes}, {"checks", r.checks},
                       {"unhealthy_nodes", r.unhealthy_nodes}, {"findings", r.findings}}},
          {"nodes", nlohmann::json::array()},
          {"diagnostics", r.diags.ToJson()}};
}


}  // namespace

nlohmann::json DriftToJson(const DriftReport& r) {
  nlohmann::json top = ReportTop(r);
  nlohmann::json& nodes = top["nodes"];
  for (const DriftNode& n : r.nodes) nodes.push_back(NodeJson(n));
  return top;
}

void DriftToJson(const DriftReport& r, std::ostream& out) {
  // DriftToJson(r).dump(2), but each node on one line of its own, as dump() writes it: the
  // snapshot's layout. At 100,000 nodes the report is 0.8 GB instead of 1.4 GB of mostly
  // indentation, and a line-oriented tool (grep, head, a reader taking one node at a time)
  // gets whole nodes. Written a node at a time, the nodes formatted on all cores.
  const nlohmann::json top = ReportTop(r);
  out << "{";
  bool first = true;
  std::string text;
  for (const auto& [key, value] : top.items()) {
    out << (first ? "\n  " : ",\n  ") << nlohmann::json(key).dump() << ": ";
    first = false;
    if (key != "nodes" || r.nodes.empty()) {
      text.clear();
      AppendIndented(text, value, 1);
      out << text;
      continue;
    }
    out << "[";
    const PlainCheckTexts plain = MakePlainCheckTexts(r);
    WriteOrdered(
        r.nodes.size(),
        [&r, &plain](size_t i, std::string& piece) {
          piece += i ? ",\n    " : "\n    ";
          AppendNodeLine(piece, r.nodes[i], plain);
        },
        out);
    out << "\n  ]";
  }
  out << "\n}\n";
}

}  // namespace plumb::plans::report
