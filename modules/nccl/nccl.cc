#include "modules/nccl/nccl.h"

#include <fmt/format.h>

#include "modules/module_util.h"
#include "modules/nccl/parse.h"
#include "modules/package_map.h"
#include "modules/pinned_packages.h"
#include "modules/packages/packages.h"
#include "modules/packages/parse.h"

namespace plumb::modules::nccl {

const ModuleInfo& NcclModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "nccl",
      .owns = {"/nvidia/nccl"},
      .channel = Channel::kInBand,
      .after = {"cuda"},
      .reads = "libnccl2 / libnccl packages",
      .changes = "pinned install",
      .disruption = Disruption::kDrain};
  return kInfo;
}

std::string NcclModule::ProbeScript() const {
  return packages::PackageListSnippet("pkgs", {"libnccl2", "libnccl-dev"},
                                      {"libnccl", "libnccl-devel"}, false);
}

Result<Facts> NcclModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return FactsFromParts(*parts);
}


std::vector<Action> NcclModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  if (!Wants(desired)) return {};
  std::string want = desired["nvidia"]["nccl"].get<std::string>();
  std::string have = StringField(facts, "version");
  std::string manager = StringField(facts, "manager");
  // libnccl2 and libnccl-dev both, not only the library the version is read from.
  const std::vector<std::string> gaps =
      PinGaps(NcclPackages(want, manager), facts.value("packages", nlohmann::json()), manager);
  if (!have.empty() && packages::VersionMatches(manager, want, have) && gaps.empty()) return {};
  nlohmann::json params = {{"manager", manager}, {"commands", InstallCommands(manager, NcclPackages(want, manager))}};
  // What is missing or from elsewhere: "have" alone can read as the pin (2.21.5 -> 2.21.5).
  if (!gaps.empty()) params["gaps"] = gaps;
  return {MakeAction(Name(), "nccl.install", "nvidia.nccl", "/nvidia/nccl",
                     gaps.empty() || have.empty() || !packages::VersionMatches(manager, want, have)
                         ? fmt::format("install NCCL {} (have {})", want, have.empty() ? "none" : have)
                         : fmt::format("install NCCL {} (have {}; {})", want, have, fmt::join(gaps, "; ")),
                     have.empty() ? nlohmann::json() : nlohmann::json(have), want,
                     Disruption::kDrain, std::move(params))};
}

ApplyOutcome NcclModule::Apply(NodeContext& ctx, const Action& action) const {
  if (action.id != "nccl.install" || !action.after.is_string()) return Module::Apply(ctx, action);
  std::string manager = action.params.value("manager", "");
  return ApplyOutcome::From(InstallPins(ctx, Name(), manager, NcclPackages(action.after.get<std::string>(), manager)));
}

}  // namespace plumb::modules::nccl
