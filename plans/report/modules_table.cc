#include "plans/report/modules_table.h"

#include <fmt/format.h>

namespace plumb::plans::report {
namespace {

// "/nvidia/driver" -> "nvidia.driver"; keys with everything below them.
std::string DesiredKeys(const modules::ModuleInfo& info) {
  std::string out;
  for (std::string_view p : info.owns) {
    std::string k(p.substr(1));
    for (char& c : k)
      if (c == '/') c = '.';
    out += (out.empty() ? "" : ", ") + fmt::format("`{}`", k);
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string ModulesMarkdown(const std::vector<const modules::Module*>& mods) {
  std::string out = "| module | reads | desired key | change | disruption |\n"
                    "|---|---|---|---|---|\n";
  for (const modules::Module* m : mods) {
    const auto& i = m->Info();
    out += fmt::format("| {}{} | {} | {} | {} | {} |\n", i.name,
                       i.channel == modules::Channel::kBmc ? " (BMC)" : "", i.reads, DesiredKeys(i),
                       i.changes, i.DisruptionText());
  }
  return out;
}

nlohmann::json ModulesJson(const std::vector<const modules::Module*>& mods) {
  nlohmann::json all = nlohmann::json::array();
  for (const modules::Module* m : mods) {
    const auto& i = m->Info();
    nlohmann::json owns = nlohmann::json::array(), after = nlohmann::json::array();
    for (auto p : i.owns) owns.push_back(std::string(p));
    for (auto a : i.after) after.push_back(std::string(a));
    all.push_back({{"name", std::string(i.name)},
                   {"owns", owns},
                   {"channel", i.channel == modules::Channel::kBmc ? "bmc" : "ssh"},
                   {"after", after},
                   {"reads", std::string(i.reads)},
                   {"changes", std::string(i.changes)},
                   {"disruption", i.DisruptionText()},
                   {"kind", i.IsHealth() ? "health" : "state"},
                   {"on_demand", i.on_demand}});
  }
  return all;
}

}  // namespace plumb::plans::report
