// SARIF 2.1.0: code-scanning UIs show each drifted key at the line of the cluster repo that pins
// it. One rule per module; waived drift is a result with an accepted external suppression.
#include <map>
#include <vector>

#include <fmt/format.h>

#include "plans/report/drift_render.h"
#include "plans/report/json_text.h"
#include "plans/report/ordered_render.h"

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

// The rules (one per module with a differing key, in order of first appearance) and, for the
// results, each differing check's rule.
json Rules(const DriftReport& r, std::map<std::string, int>& rule_index) {
  json rules = json::array();
  for (const DriftNode& n : r.nodes) {
    for (const DriftCheck& c : n.checks) {
      if (!c.Differs()) continue;
      auto [it, added] = rule_index.emplace(c.module(), static_cast<int>(rules.size()));
      if (added)
        rules.push_back(
            {{"id", "plumb.drift." + c.module()},
             {"name", "Drift" + c.module()},
             {"shortDescription", {{"text", fmt::format("{} differs from the pinned value", c.module())}}},
             {"fullDescription",
              {{"text", fmt::format("A key owned by plumb's {} module has a live value that "
                                    "differs from the value pinned in the cluster repo.",
                                    c.module())}}},
             {"defaultConfiguration", {{"level", "error"}}}});
    }
  }
  return rules;
}

json Result(const DriftNode& n, const DriftCheck& c, int rule_index) {
  json result = {
      {"ruleId", "plumb.drift." + c.module()},
      {"ruleIndex", rule_index},
      {"level", "error"},
      {"kind", "fail"},
      {"message",
       {{"text", fmt::format("{}: {} is {}, pinned {} ({})", n.node, c.key(),
                             ShowValue(c.observed), ShowValue(c.desired()),
                             c.reason == ChangeReason::kRepair
                                 ? "repair: drifted since the last apply"
                                 : "intent: not applied yet")}}},
      {"partialFingerprints", {{"plumbNodeKey/v1", n.node + "/" + c.key()}}},
      {"properties",
       {{"node", n.node}, {"key", c.key()}, {"module", c.module()},
        {"reason", ChangeReasonName(c.reason)}, {"desired", c.desired()},
        {"observed", c.observed}, {"disruption", modules::DisruptionName(c.disruption)}}}};
  json location = {{"logicalLocations", json::array({{{"name", n.node},
                                                       {"fullyQualifiedName", n.node + "/" + c.key()},
                                                       {"kind", "resource"}}})}};
  if (c.origin().known()) {
    json phys = {{"artifactLocation", {{"uri", PathToUri(c.origin().file)}, {"uriBaseId", "CLUSTERREPO"}}}};
    if (c.origin().line > 0) {
      phys["region"] = {{"startLine", c.origin().line}};
      if (c.origin().column > 0) phys["region"]["startColumn"] = c.origin().column;
    }
    location["physicalLocation"] = std::move(phys);
  }
  result["locations"] = json::array({std::move(location)});
  if (c.status == CheckStatus::kWaived) {
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
                      {"verdict", DriftVerdictName(r.verdict)}, {"created_at", r.created_at}}}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({std::move(run)})}};
}


}  // namespace

json DriftToSarif(const DriftReport& r, const RenderOptions& o) {
  std::map<std::string, int> rule_index;
  json doc = Skeleton(r, o, Rules(r, rule_index));
  json& results = doc["runs"][0]["results"];
  for (const DriftNode& n : r.nodes)
    for (const DriftCheck& c : n.checks)
      if (c.Differs()) results.push_back(Result(n, c, rule_index.at(c.module())));
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
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    size_t differing = 0;
    for (const DriftCheck& c : r.nodes[i].checks) differing += c.Differs() ? 1 : 0;
    first_result[i + 1] = first_result[i] + differing;
  }
  if (first_result.back() == 0) {
    out << "[]";
  } else {
    out << "[";
    WriteOrdered(
        r.nodes.size(),
        [&](size_t i, std::string& piece) {
          size_t k = first_result[i];
          const DriftNode& n = r.nodes[i];
          for (const DriftCheck& c : n.checks) {
            if (!c.Differs()) continue;
            piece += k++ ? ",\n        " : "\n        ";
            AppendIndented(piece, Result(n, c, rule_index.at(c.module())), 4);
          }
        },
        out);
    out << "\n      ]";
  }
  out.write(text.data() + at + 2, static_cast<std::streamsize>(text.size() - at - 2));
  out << "\n";
}

}  // namespace plumb::plans::report
