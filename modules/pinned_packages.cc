#include "modules/pinned_packages.h"

#include <fmt/format.h>

#include "modules/module_util.h"
#include "modules/packages/packages.h"
#include "modules/packages/parse.h"

namespace plumb::modules {

std::string PinnedPackagesSnippet(const std::vector<std::string>& deb_patterns,
                                  const std::vector<std::string>& rpm_patterns) {
  return packages::PackageListSnippet("pins", deb_patterns, rpm_patterns, /*all=*/true);
}

Result<nlohmann::json> PinnedPackagesFrom(const std::vector<ProbePart>& parts,
                                          std::string_view module) {
  const ProbePart* pins = nullptr;
  for (const ProbePart& p : parts)
    if (p.name == "pins") pins = &p;
  const std::string manager = PackageManagerOf(parts);
  if (!pins || pins->absent()) return nlohmann::json();
  // dpkg-query exits 1 when a pattern matches nothing: that is "none installed", not an error.
  auto list = manager == "rpm" ? packages::ParseRpmQuery(pins->text, module)
                               : packages::ParseDpkgQuery(pins->text, module);
  if (!list) return list.error();
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : *list)
    if (p.installed) out[p.name] = {{"version", p.version}};
  return out;
}

void AddPinnedPackages(const std::vector<ProbePart>& parts, std::string_view module,
                       nlohmann::json& facts) {
  auto pins = PinnedPackagesFrom(parts, module);
  if (!pins.ok()) {
    if (!facts.contains(kPartErrorsKey)) facts[kPartErrorsKey] = nlohmann::json::array();
    facts[kPartErrorsKey].push_back({{"part", "pins"},
                                     {"code", pins.error().code},
                                     {"message", pins.error().message}});
    return;
  }
  if (!pins->is_null()) facts["packages"] = std::move(*pins);
}

std::vector<std::string> PinGaps(const std::vector<PackagePin>& pins, const nlohmann::json& installed,
                                 std::string_view manager) {
  std::vector<std::string> gaps;
  if (!installed.is_object()) return gaps;
  for (const PackagePin& pin : pins) {
    auto it = installed.find(pin.name);
    if (it == installed.end() || !it->is_object()) {
      gaps.push_back(fmt::format("{} is not (fully) installed", pin.name));
      continue;
    }
    const std::string have = it->value("version", "");
    bool ok = true;
    if (!pin.version.empty()) ok = packages::VersionMatches(manager, pin.version, have);
    else if (!pin.upstream.empty())
      ok = manager == "rpm" ? have.rfind(pin.upstream, 0) == 0 || have.find(":" + pin.upstream) != std::string::npos
                            : DebUpstream(have) == pin.upstream;
    if (!ok)
      gaps.push_back(fmt::format("{} is at {}, not {}", pin.name, have,
                                 pin.version.empty() ? pin.upstream : pin.version));
  }
  return gaps;
}

}  // namespace plumb::modules
