#pragma once
/// packages: every installed package with its exact version (dpkg or rpm).
/// Desired `packages: { name: version }` (epochs included: "1:3.3.7"); a mismatch installs
/// exactly that version (drain). Held dpkg packages are changed with
/// --allow-change-held-packages and held again afterwards.
#include "modules/module.h"

namespace plumb::modules::packages {

class PackagesModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

/// The probe lines that list `names` (or every package when empty) as part `part`, for
/// whichever of dpkg/rpm the node has. Shared with the nccl module.
std::string PackageListSnippet(std::string_view part, const std::vector<std::string>& deb_names,
                               const std::vector<std::string>& rpm_names, bool all);

}  // namespace plumb::modules::packages
