#include "plans/report/acceptance.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "modules/registry.h"
#include "plans/core/digest.h"
#include "plans/report/drift_render.h"   // ShowValue

namespace plumb::plans::report {

namespace {

using HealthStatus = modules::CheckStatus;

nlohmann::json PinsOf(const DriftNode& n, const modules::Registry& registry,
                      std::vector<std::string>& reasons) {
  nlohmann::json pins = nlohmann::json::array();
  for (const DriftCheck& c : n.checks) {
    // Health keys are thresholds, not pins: their checks are the node's health, below.
    const modules::Module* m = registry.Find(c.module());
    if (m && m->Info().IsHealth()) continue;
    // In sync, the live value is the desired one; otherwise the observed one (null: absent).
    const nlohmann::json live = c.status == DriftStatus::kInSync ? c.desired() : c.observed;
    nlohmann::json pin = {{"key", c.key()},
                          {"module", c.module()},
                          {"desired", c.desired()},
                          {"live", c.status == DriftStatus::kUnchecked ? nlohmann::json() : live},
                          {"status", DriftStatusName(c.status)}};
    if (c.waiver) pin["waiver"] = {{"reason", c.waiver->reason}, {"owner", c.waiver->owner},
                                   {"expires", c.waiver->expires}};
    if (c.status == DriftStatus::kDrift)
      reasons.push_back(fmt::format("drift: {}: {}, want {}", c.key(), ShowValue(c.observed),
                                    ShowValue(c.desired())));
    // A pin nothing read (firmware without the BMC) is not verified: it cannot pass.
    if (c.status == DriftStatus::kUnchecked)
      reasons.push_back(fmt::format("not verified: {} (no module of this run read it{})", c.key(),
                                    m && m->HasBmcProbe() ? ": the BMC was not read" : ""));
    pins.push_back(std::move(pin));
  }
  return pins;
}

// The node's firmware components, from the modules that list them
// (ModuleInfo::firmware_inventory_key); null when none of them was read.
nlohmann::json FirmwareOf(const ObservedState& observed, const std::string& node,
                          const modules::Registry& registry) {
  auto n = observed.nodes.find(node);
  if (n == observed.nodes.end()) return nullptr;
  nlohmann::json out = nullptr;
  for (const modules::Module* m : registry.All()) {
    const std::string_view key = m->Info().firmware_inventory_key;
    if (key.empty()) continue;
    auto f = n->second.facts.find(std::string(m->Name()));
    if (f == n->second.facts.end() || !f->second.ok()) continue;
    if (out.is_null()) out = nlohmann::json::array();
    const nlohmann::json& facts = f->second.value();
    if (auto c = facts.find(std::string(key)); c != facts.end() && c->is_array())
      for (const nlohmann::json& comp : *c)
        if (comp.is_object())
          out.push_back({{"name", comp.value("name", comp.value("id", std::string()))},
                         {"version", comp.value("version", nlohmann::json())}});
  }
  return out;
}

}  // namespace

int AcceptanceReport::Passed() const {
  int n = 0;
  for (const AcceptanceNode& a : nodes) n += a.passed ? 1 : 0;
  return n;
}
int AcceptanceReport::Failed() const { return static_cast<int>(nodes.size()) - Passed(); }

AcceptanceReport MakeAcceptanceReport(const AcceptanceMeta& meta, const DriftReport& drift,
                                      const ObservedState& observed,
                                      const std::vector<NodeHealth>& health,
                                      const modules::Registry& registry) {
  AcceptanceReport r;
  r.meta = meta;
  std::map<std::string, const NodeHealth*> by_node;
  for (const NodeHealth& h : health) by_node[h.node] = &h;
  for (const DriftNode& d : drift.nodes) {
    AcceptanceNode a;
    a.node = d.node;
    if (!d.readable) a.reasons.push_back("unreadable: " + d.unreadable_reason);
    a.pins = PinsOf(d, registry, a.reasons);
    a.firmware = FirmwareOf(observed, d.node, registry);
    a.readable = d.readable;
    if (auto h = by_node.find(d.node); h != by_node.end()) {
      a.health_checked = true;
      a.health = *h->second;
      for (std::string& line : a.health.FailureLines()) a.reasons.push_back(std::move(line));
      // A check held back (the node was busy) did not run: burn-in is not done there.
      for (const modules::CheckResult& c : a.health.checks)
        if (c.status == modules::CheckStatus::kSkip && c.id == c.module + ".held")
          a.reasons.push_back(fmt::format("{}: {}", c.module, c.message));
      if (a.health.modules.empty()) a.reasons.push_back("health: the stack pins no health check");
    } else {
      a.health.node = d.node;
      a.reasons.push_back("health: not checked");
    }
    a.passed = a.reasons.empty();
    r.nodes.push_back(std::move(a));
  }
  return r;
}

nlohmann::json AcceptanceToJson(const AcceptanceReport& r) {
  nlohmann::json nodes = nlohmann::json::array();
  nlohmann::json failed = nlohmann::json::array();
  for (const AcceptanceNode& a : r.nodes) {
    nodes.push_back({{"node", a.node},
                     {"passed", a.passed},
                     {"readable", a.readable},
                     {"health_checked", a.health_checked},
                     {"reasons", a.reasons},
                     {"pins", a.pins},
                     {"firmware", a.firmware},
                     {"health", a.health.ToJson()}});
    if (!a.passed) failed.push_back({{"node", a.node}, {"reasons", a.reasons}});
  }
  nlohmann::json doc = {
      {"kind", "plumb-acceptance"},
      {"version", 1},
      {"cluster", r.meta.cluster},
      {"ref", r.meta.repo_ref},
      {"commit", r.meta.commit},
      {"operator", r.meta.operator_name},
      {"started_at", r.meta.started_at},
      {"finished_at", r.meta.finished_at},
      {"tool_version", r.meta.tool_version},
      {"dcgm_level", r.meta.dcgm_level},
      {"summary",
       {{"nodes", r.nodes.size()}, {"passed", r.Passed()}, {"failed", r.Failed()}, {"failures", failed}}},
      {"nodes", std::move(nodes)}};
  doc["digest"] = JsonDigest(doc);
  return doc;
}

Status VerifyAcceptanceDigest(const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("digest") || !report["digest"].is_string() ||
      report.value("kind", "") != "plumb-acceptance")
    return Diagnostic::Error("acceptance.format", "not a plumb acceptance report (no kind/digest)");
  nlohmann::json body = report;
  const std::string recorded = body["digest"].get<std::string>();
  body.erase("digest");
  const std::string now = JsonDigest(body);
  if (now != recorded)
    return Diagnostic::Error("acceptance.digest",
                             fmt::format("the report was changed after it was written: its digest "
                                         "says {}, its content is {}", recorded, now),
                             {}, "",
                             "re-run plumb acceptance for a report that verifies");
  return OkStatus();
}

}  // namespace plumb::plans::report
