#pragma once
/// ofed: the MLNX_OFED / DOCA-OFED stack (ofed_info -s). Desired `ofed: 24.07-0.6.1.0` installs
/// it (package_map.h) and reboots.
#include "modules/module.h"

namespace plumb::modules::ofed {

class OfedModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

}  // namespace plumb::modules::ofed
