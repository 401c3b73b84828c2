#include "modules/bmc_util.h"

namespace plumb::modules {

std::string LinkOf(const nlohmann::json& obj, std::string_view key) {
  std::string k(key);
  if (!obj.is_object() || !obj.contains(k) || !obj[k].is_object()) return {};
  const auto& v = obj[k];
  return v.contains("@odata.id") && v["@odata.id"].is_string() ? v["@odata.id"].get<std::string>()
                                                                : std::string();
}

bool SameValue(const nlohmann::json& a, const nlohmann::json& b) {
  if (a == b) return true;
  auto text = [](const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); };
  if ((a.is_number() && b.is_string()) || (a.is_string() && b.is_number())) {
    return text(a) == text(b);
  }
  return false;
}

Result<nlohmann::json> GetSystem(transport::Bmc& bmc, std::string* link) {
  auto l = bmc.SystemLink();
  if (!l.ok()) return l.error();
  if (link) *link = l.value();
  return bmc.Get(l.value());
}

Diagnostic NoBmc(std::string_view module, std::string_view action_id) {
  return Diagnostic::Error("apply.no-bmc",
                           std::string(module) + ": '" + std::string(action_id) +
                               "' needs the node's BMC, and the node has none (set bmc: in inventory.yaml)");
}

}  // namespace plumb::modules
