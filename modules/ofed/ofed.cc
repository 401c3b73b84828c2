#include "modules/ofed/ofed.h"

#include <fmt/format.h>

#include "modules/module_util.h"
#include "modules/ofed/parse.h"
#include "modules/package_map.h"

namespace plumb::modules::ofed {

const ModuleInfo& OfedModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "ofed",
      .owns = {"/ofed"},
      .channel = Channel::kInBand,
      .after = {"kernel"},
      .reads = "`ofed_info -s`",
      .changes = "`mlnx-ofed-all`",
      .disruption = Disruption::kReboot};
  return kInfo;
}

std::string OfedModule::ProbeScript() const {
  return "plumb_run ofed_info ofed_info -s\n" + std::string(kPackageManagerSnippet);
}

Result<Facts> OfedModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return FactsFromParts(*parts);
}


std::vector<Action> OfedModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  if (!Wants(desired)) return {};
  std::string want = desired["ofed"].get<std::string>();
  std::string have = StringField(facts, "version");
  if (OfedVersionMatches(want, have)) return {};
  return {MakeAction(Name(), "ofed.install", "ofed", "/ofed",
                     fmt::format("install OFED {} and reboot (have {})", want, have.empty() ? "none" : have),
                     have.empty() ? nlohmann::json() : nlohmann::json(have), want,
                     Disruption::kReboot, {{"manager", StringField(facts, "manager")}})};
}

ApplyOutcome OfedModule::Apply(NodeContext& ctx, const Action& action) const {
  if (action.id != "ofed.install" || !action.after.is_string()) return Module::Apply(ctx, action);
  std::string manager = action.params.value("manager", "");
  return ApplyOutcome::From(InstallPins(ctx, Name(), manager, OfedPackages(action.after.get<std::string>(), manager)));
}

}  // namespace plumb::modules::ofed
