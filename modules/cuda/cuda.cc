#include "modules/cuda/cuda.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "modules/cuda/parse.h"
#include "modules/module_util.h"
#include "modules/package_map.h"
#include "modules/pinned_packages.h"

namespace plumb::modules::cuda {

const ModuleInfo& CudaModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "cuda",
      .owns = {"/nvidia/cuda"},
      .channel = Channel::kInBand,
      .after = {"nvidia_driver"},
      .reads = "`/usr/local/cuda/version.json`, the toolkit package",
      .changes = "`cuda-toolkit-X-Y`",
      .disruption = Disruption::kDrain};
  return kInfo;
}

std::string CudaModule::ProbeScript() const {
  return std::string(
             "plumb_cat version_json /usr/local/cuda/version.json\n"
             "plumb_cat version_txt /usr/local/cuda/version.txt\n"
             "plumb_begin toolkits; ls -d /usr/local/cuda-* 2>/dev/null; plumb_end toolkits 0\n") +
         PinnedPackagesSnippet({"cuda-toolkit-*"}, {"cuda-toolkit-*"});
}

Result<Facts> CudaModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  Facts facts = FactsFromParts(*parts);
  // Every package its pins install, each (an install cut short is not a finished one).
  AddPinnedPackages(*parts, Name(), facts);
  return facts;
}


std::vector<Action> CudaModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  if (!Wants(desired)) return {};
  std::string want = desired["nvidia"]["cuda"].get<std::string>();
  std::string have = StringField(facts, "version");
  const std::string manager = StringField(facts, "manager");
  const std::vector<std::string> gaps =
      PinGaps(CudaPackages(want, manager), facts.value("packages", nlohmann::json()), manager);
  if (VersionPrefixMatches(want, have) && gaps.empty()) return {};
  nlohmann::json params = {{"manager", manager}, {"commands", InstallCommands(manager, CudaPackages(want, manager))}};
  // What is missing or from elsewhere: "have" alone can read as the pin (12.4.1 -> 12.4.1).
  if (!gaps.empty()) params["gaps"] = gaps;
  return {MakeAction(Name(), "cuda.install", "nvidia.cuda", "/nvidia/cuda",
                     gaps.empty() ? fmt::format("install CUDA {} (have {})", want, have.empty() ? "none" : have)
                                  : fmt::format("install CUDA {} (have {}; {})", want, have.empty() ? "none" : have,
                                                fmt::join(gaps, "; ")),
                     have.empty() ? nlohmann::json() : nlohmann::json(have), want,
                     Disruption::kDrain, std::move(params))};
}

ApplyOutcome CudaModule::Apply(NodeContext& ctx, const Action& action) const {
  if (action.id != "cuda.install" || !action.after.is_string()) return Module::Apply(ctx, action);
  std::string manager = action.params.value("manager", "");
  return ApplyOutcome::From(InstallPins(ctx, Name(), manager, CudaPackages(action.after.get<std::string>(), manager)));
}

}  // namespace plumb::modules::cuda
