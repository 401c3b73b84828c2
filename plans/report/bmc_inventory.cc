#include "plans/report/bmc_inventory.h"

#include <algorithm>

#include <fmt/format.h>

namespace plumb::plans::report {

std::string BmcSummaryLine(const BmcObservation& o, const std::vector<const modules::Module*>& mods) {
  if (!o.reachable) {
    return fmt::format("{:<12} unreachable [{}]: {}{}", o.node, o.error.code, o.error.message,
                       o.error.hint.empty() ? "" : "\n  hint: " + o.error.hint);
  }
  std::string s = fmt::format("{:<12}", o.node);
  for (const auto& [name, r] : o.facts) {
    if (!r.ok()) {
      s += " " + name + ": error " + r.error().code;
      continue;
    }
    auto m = std::find_if(mods.begin(), mods.end(),
                          [&name = name](const modules::Module* mod) { return mod->Name() == name; });
    if (m == mods.end()) continue;
    if (std::string part = (*m)->BmcSummary(r.value()); !part.empty()) s += " " + part;
  }
  return s;
}

bool BmcInventoryPartial(const std::vector<BmcObservation>& obs) {
  for (const auto& ob : obs) {
    if (!ob.reachable) return true;
    for (const auto& [n, r] : ob.facts)
      if (!r.ok()) return true;
  }
  return false;
}

nlohmann::json BmcInventoryJson(const std::vector<BmcObservation>& obs) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& ob : obs) all.push_back(ToJson(ob));
  return {{"format", "plumb.bmc-inventory/v1"}, {"nodes", all}};
}

std::string BmcInventoryText(const std::vector<BmcObservation>& obs,
                             const std::vector<const modules::Module*>& mods) {
  std::string out;
  for (const auto& ob : obs) {
    out += BmcSummaryLine(ob, mods) + "\n";
    std::vector<std::string> said;   // one cause (no system named) fails every module
    for (const auto& [n, r] : ob.facts) {
      if (r.ok()) continue;
      std::string text = r.error().ToString();
      if (std::find(said.begin(), said.end(), text) != said.end()) continue;
      said.push_back(text);
      out += "  " + text + "\n";
    }
  }
  out += fmt::format("{} BMCs, {}\n", obs.size(), BmcInventoryPartial(obs) ? "some unreadable" : "all read");
  return out;
}

}  // namespace plumb::plans::report
