// SARIF 2.1.0: code-scanning UIs show each drifted key at the line of the cluster repo that pins
// it. One rule per module; waived drift is a result with an accepted external suppression.
#include <map>

#include <fmt/format.h>

#include "plans/report/drift_render.h"

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

}  // namespace

json DriftToSarif(const DriftReport& r, const RenderOptions& o) {
  std::map<std::string, int> rule_index;
  json rules = json::array();
  json results = json::array();
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
      json result = {
          {"ruleId", "plumb.drift." + c.module()},
          {"ruleIndex", it->second},
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
      results.push_back(std::move(result));
    }
  }
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
      {"results", std::move(results)},
      {"properties", {{"cluster", r.cluster}, {"commit", r.source.commit}, {"ref", r.source.ref},
                      {"verdict", DriftVerdictName(r.verdict)}, {"created_at", r.created_at}}}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({std::move(run)})}};
}

}  // namespace plumb::plans::report
