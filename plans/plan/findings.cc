#include "plans/plan/findings.h"

#include <fmt/format.h>

#include "modules/health_util.h"

namespace plumb::plans {
namespace {

std::string ValueWords(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ListWords(const nlohmann::json& v) {
  if (!v.is_array()) return ValueWords(v);
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + ValueWords(x);
  return out.empty() ? "none" : out;
}

}  // namespace

bool IsFinding(const modules::CheckResult& c) {
  return c.status == modules::CheckStatus::kFail || c.status == modules::CheckStatus::kWarn;
}

Location HealthOrigin(const inventory::NodeDesired& nd, std::string_view module) {
  const std::string pointer = fmt::format("/health/{}", module);
  if (Location l = nd.OriginOf(pointer); l.known()) return l;
  // The map itself has no origin of its own; its first key written does.
  const inventory::OriginMap& origins = *nd.origins;
  for (auto it = origins.lower_bound(pointer + "/");
       it != origins.end() && it->first.compare(0, pointer.size() + 1, pointer + "/") == 0; ++it)
    if (it->second.known()) return it->second;
  return {};
}

Result<std::vector<Finding>> ModuleFindings(const modules::Module& m, const inventory::NodeDesired& nd,
                                            const nlohmann::json& facts) {
  std::vector<Finding> out;
  if (!m.Wants(nd.desired)) return out;
  auto checks = modules::CheckFacts(m, nd.desired, facts);
  if (!checks.ok()) return checks.error();
  const Location origin = HealthOrigin(nd, m.Name());
  for (modules::CheckResult& c : *checks)
    if (IsFinding(c)) out.push_back({std::move(c), origin});
  return out;
}

std::vector<std::string> FailedChecks(const nlohmann::json& desired, const nlohmann::json& facts,
                                      const std::vector<const modules::Module*>& modules) {
  std::vector<std::string> out;
  for (const modules::Module* m : modules) {
    if (!m->Info().IsHealth() || !m->Wants(desired)) continue;
    auto f = facts.find(std::string(m->Name()));
    if (f == facts.end()) continue;   // not read here: on demand, or not gathered
    auto checks = modules::CheckFacts(*m, desired, *f);
    if (!checks.ok()) {
      out.push_back(fmt::format("{}: {}", m->Name(), checks.error().message));
      continue;
    }
    for (const modules::CheckResult& c : *checks)
      if (c.status == modules::CheckStatus::kFail) out.push_back(FindingText(c));
  }
  return out;
}

std::string ThresholdText(const nlohmann::json& t) {
  if (t.is_null()) return "";
  if (!t.is_object()) return ValueWords(t);
  std::string out;
  for (const auto& [k, v] : t.items()) {
    std::string part;
    if (k == "equals") part = "= " + ValueWords(v);
    else if (k == "forbidden") part = "not " + ListWords(v);
    else part = k + " " + (v.is_array() ? ListWords(v) : ValueWords(v));
    out += (out.empty() ? "" : ", ") + part;
  }
  return out;
}

std::string FindingText(const modules::CheckResult& c) {
  std::string out = fmt::format("{}: {}", c.module, c.name);
  if (!c.subject.empty()) out += " on " + c.subject;
  const std::string threshold = ThresholdText(c.threshold);
  const std::string measured = c.measured.is_null() ? "not measured" : ListWords(c.measured);
  out += threshold.empty() ? fmt::format(": {}", measured)
                           : fmt::format(": {} ({})", measured, threshold);
  if (!c.message.empty()) out += ": " + c.message;
  return out;
}

}  // namespace plumb::plans
