// SARIF 2.1.0: code-scanning UIs show each drifted key at the line of the cluster repo that pins
// it. One rule per module; waived drift is a result with an accepted external suppression.
#include <map>
#include <vector>

#include <fmt/format.h>

#include "plans/core/json_text.h"
#include "plans/plan/findings.h"
#include "plans/report/drift_render.h"
#include "plans/report/ordered_render.h"
#include "plans/report/rows.h"

namespace plumb::plans::report {
namespace {

using nlohmann::json;

// uri-reference: the repo-relative path, with the few characters a path may hold that a URI
// may not percent-encoded.
std::string PathToUri(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("-._~/!$&'()*+,;=:@").find(c) != std::string_view::npos)
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

// The rule id of a differing check, and of a health finding.
std::string DriftRule(const std::string& module) { return "plumb.drift." + module; }
std::string HealthRule(const std::string& module) { return "plumb.health." + module; }

// The rules (one per module with a differing key, one per health module with a finding, in
// order of first appearance) and, for the results, each rule's index.
json Rules(const DriftReport& r, std::map<std::string, int>& rule_index) {
  json rules = json::array();
  for (const DriftNode& n : r.nodes) {
    for (const DriftCheck& c : n.checks) {
      if (!c.Differs()) continue;
      auto [it, added] = rule_index.emplace(DriftRule(c.module()), static_cast<int>(rules.size()));
      if (added)
        rules.push_back(
            {{"id", DriftRule(c.module())},
             {"name", "Drift" + c.module()},
             {"shortDescription", {{"text", fmt::format("{} differs from the pinned value", c.module())}}},
             {"fullDescription",
              {{"text", fmt::format("A key owned by plumb's {} module has a live value that "
                                    "differs from the value pinned in the cluster repo.",
                                    c.module())}}},
             {"defaultConfiguration", {{"level", "error"}}}});
    }
    for (const Finding& f : n.findings) {
      const std::string& m = f.check.module;
      auto [it, added] = rule_index.emplace(HealthRule(m), static_cast<int>(rules.size()));
      if (added)
        rules.push_back(
            {{"id", HealthRule(m)},
             {"name", "Health" + m},
             {"shortDescription", {{"text", fmt::format("a {} check failed or warned", m)}}},
             {"fullDescription",
              {{"text", fmt::format("A health check of plumb's {} module measured a value outside "
                                    "the threshold pinned in the cluster repo. A finding, not drift: "
                                    "nothing is applied for it.", m)}}},
             {"defaultConfiguration", {{"level", "error"}}}});
    }
  }
  return rules;
}

json PinLocation(const Location& origin, json logical) {
  json location = {{"logicalLocations", json::array({std::move(logical)})}};
  if (origin.known()) {
    json phys = {{"artifactLocation", {{"uri", PathToUri(origin.file)}, {"uriBaseId", "CLUSTERREPO"}}}};
    if (origin.line > 0) {
      phys["region"] = {{"startLine", origin.line}};
      if (origin.column > 0) phys["region"]["startColumn"] = origin.column;
    }
    location["physicalLocation"] = std::move(phys);
  }
  return location;
}

json FindingResult(const DriftNode& n, const Finding& f, int rule_index) {
  const modules::CheckResult& c = f.check;
  const bool failed = c.status == modules::CheckStatus::kFail;
  return {{"ruleId", HealthRule(c.module)},
          {"ruleIndex", rule_index},
          {"level", failed ? "error" : "warning"},
          {"kind", "fail"},
          {"message", {{"text", fmt::format("{}: {}", n.node, FindingText(c))}}},
          {"partialFingerprints", {{"plumbNodeCheck/v1", n.node + "/" + c.id}}},
          {"properties",
           {{"node", n.node}, {"module", c.module}, {"check", c.id}, {"name", c.name},
            {"subject", c.subject}, {"status", modules::CheckStatusName(c.status)},
            {"measured", c.measured}, {"threshold", c.threshold}}},
          {"locations", json::array({PinLocation(f.origin, {{"name", n.node},
                                                            {"fullyQualifiedName", n.node + "/" + c.id},
                                                            {"kind", "resource"}})})}};
}

json SarifResult(const DriftNode& n, const DriftCheck& c, int rule_index) {
  // A key with several members (ports): each its own result, told apart by the member.
  const std::string at = c.member.empty() ? c.key() : c.key() + "/" + c.member;
  json result = {
      {"ruleId", DriftRule(c.module())},
      {"ruleIndex", rule_index},
      {"level", "error"},
      {"kind", "fail"},
      {"message",
       {{"text", fmt::format("{}: {} is {}, pinned {} ({}){}", n.node, RowName(c.key(), c.member),
                             ShowValue(c.observed), ShowValue(c.desired()),
                             c.reason == ChangeReason::kRepair
                                 ? "repair: drifted since the last apply"
                                 : "intent: not applied yet",
                             c.why.empty() ? "" : "; why: " + c.why)}}},
      {"partialFingerprints", {{"plumbNodeKey/v1", n.node + "/" + at}}},
      {"properties",
       {{"node", n.node}, {"key", c.key()}, {"module", c.module()},
        {"reason", ChangeReasonName(c.reason)}, {"desired", c.desired()},
        {"observed", c.observed}, {"disruption", modules::DisruptionName(c.disruption)}}}};
  if (!c.member.empty()) result["properties"]["member"] = c.member;
  if (!c.why.empty()) result["properties"]["why"] = c.why;
  result["locations"] = json::array({PinLocation(c.origin(), {{"name", n.node},
                                                              {"fullyQualifiedName", n.node + "/" + at},
                                                              {"kind", "resource"}})});
  if (c.status == DriftStatus::kWaived) {
    result["suppressions"] = json::array(
        {{{"kind", "external"}, {"status", "accepted"},
          {"justification", fmt::format("{} (owner {}, until {})", c.waiver->reason,
                                        c.waiver->owner, c.waiver->expires)}}});
  }
  return result;
}

// The whole log with the results left empty.
json Skeleton(const DriftReport& r, const RenderOptions& o, json rules) {
  json notifications = json::array();
  for (const DriftNode& n : r.nodes)
    if (!n.readable)
      notifications.push_back(
          {{"level", "error"},
           {"message", {{"text", fmt::format("node {} could not be read: {}", n.node,
                                             n.unreadable_reason)}}}});
  for (const Diagnostic& d : r.diags.items())
    notifications.push_back({{"level", d.severity == Severity::kError ? "error" : "warning"},
                             {"message", {{"text", d.ToString()}}}});
  json invocation = {{"executionSuccessful", true}};
  if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);
  json run = {
      {"tool", {{"driver", {{"name", "plumb"},
                            {"version", o.tool_version},
                            {"semanticVersion", o.tool_version},
                            {"rules", std::move(rules)}}}}},
      {"invocations", json::array({std::move(invocation)})},
      {"columnKind", "unicodeCodePoints"},
      {"results", json::array()},
      {"properties", {{"cluster", r.cluster}, {"commit", r.source.commit}, {"ref", r.source.ref},
                      {"verdict", DriftVerdictName(r.verdict)}, {"created_at", r.created_at},
                      {"gathered_at", r.gathered_at}}}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({std::move(run)})}};
}


// A node's results: its differing checks, then its health findings.
std::vector<json> NodeResults(const DriftNode& n, const std::map<std::string, int>& rule_index) {
  std::vector<json> out;
  for (const DriftCheck& c : n.checks)
    if (c.Differs()) out.push_back(SarifResult(n, c, rule_index.at(DriftRule(c.module()))));
  for (const Finding& f : n.findings)
    out.push_back(FindingResult(n, f, rule_index.at(HealthRule(f.check.module))));
  return out;
}

size_t ResultCount(const DriftNode& n) {
  size_t k = n.findings.size();
  for (const DriftCheck& c : n.checks) k += c.Differs() ? 1 : 0;
  return k;
}

}  // namespace

json DriftToSarif(const DriftReport& r, const RenderOptions& o) {
  std::map<std::string, int> rule_index;
  json doc = Skeleton(r, o, Rules(r, rule_index));
  json& results = doc["runs"][0]["results"];
  for (const DriftNode& n : r.nodes)
    for (json& x : NodeResults(n, rule_index)) results.push_back(std::move(x));
  return doc;
}

void DriftToSarif(const DriftReport& r, const RenderOptions& o, std::ostream& out) {
  // DriftToSarif(r, o).dump(2) and a newline, the results formatted on all cores and written
  // in order: the skeleton's text is cut where its empty results array is (the one key at
  // depth 3 named "results").
  std::map<std::string, int> rule_index;
  const std::string text =
      Skeleton(r, o, Rules(r, rule_index)).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string marker = "\n      \"results\": ";
  const size_t at = text.find(marker) + marker.size();
  out.write(text.data(), static_cast<std::streamsize>(at));
  // Where each node's results start in the array: the very first one has no comma before it.
  std::vector<size_t> first_result(r.nodes.size() + 1, 0);
  for (size_t i = 0; i < r.nodes.size(); ++i) first_result[i + 1] = first_result[i] + ResultCount(r.nodes[i]);
  if (first_result.back() == 0) {
    out << "[]";
  } else {
    out << "[";
    WriteOrdered(
        r.nodes.size(),
        [&](size_t i, std::string& piece) {
          size_t k = first_result[i];
          for (const json& x : NodeResults(r.nodes[i], rule_index)) {
            piece += k++ ? ",\n        " : "\n        ";
            AppendIndented(piece, x, 4);
          }
        },
        out);
    out << "\n      ]";
  }
  out.write(text.data() + at + 2, static_cast<std::streamsize>(text.size() - at - 2));
  out << "\n";
}

}  // namespace plumb::plans::report
