#include "modules/cuda/cuda.h"

#include <fmt/format.h>

#include "modules/cuda/parse.h"
#include "modules/module_util.h"
#include "modules/package_map.h"

namespace plumb::modules::cuda {

std::string CudaModule::ProbeScript() const {
  return std::string(
             "plumb_cat version_json /usr/local/cuda/version.json\n"
             "plumb_cat version_txt /usr/local/cuda/version.txt\n"
             "plumb_begin toolkits; ls -d /usr/local/cuda-* 2>/dev/null; plumb_end toolkits 0\n") +
         std::string(kPackageManagerSnippet);
}

Result<Facts> CudaModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return Facts(FactsFromParts(*parts));
}

bool CudaModule::Wants(const nlohmann::json& desired) const {
  const auto* v = Lookup(desired, {"nvidia", "cuda"});
  return v && v->is_string();
}

std::vector<Action> CudaModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  if (!Wants(desired)) return {};
  std::string want = desired["nvidia"]["cuda"].get<std::string>();
  std::string have = StringField(facts, "version");
  if (VersionPrefixMatches(want, have)) return {};
  return {MakeAction(Name(), "cuda.install", "nvidia.cuda", "/nvidia/cuda",
                     fmt::format("install CUDA {} (have {})", want, have.empty() ? "none" : have),
                     have.empty() ? nlohmann::json() : nlohmann::json(have), want,
                     Disruption::kDrain, {{"manager", StringField(facts, "manager")}})};
}

Status CudaModule::Apply(NodeContext& ctx, const Action& action) const {
  if (action.id != "cuda.install" || !action.after.is_string()) return Module::Apply(ctx, action);
  std::string manager = action.params.value("manager", "");
  return InstallPins(ctx, Name(), manager, CudaPackages(action.after.get<std::string>(), manager));
}

}  // namespace plumb::modules::cuda
