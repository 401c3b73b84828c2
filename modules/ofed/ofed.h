#pragma once
/// ofed: the MLNX_OFED / DOCA-OFED stack (ofed_info -s). Desired `ofed: 24.07-0.6.1.0` installs
/// it (package_map.h) and reboots.
#include "modules/module.h"

namespace plumb::modules::ofed {

class OfedModule final : public Module {
 public:
  std::string_view Name() const override { return "ofed"; }
  std::vector<std::string_view> After() const override { return {"kernel"}; }
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  bool Wants(const nlohmann::json& desired) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  Status Apply(NodeContext& ctx, const Action& action) const override;
};

}  // namespace plumb::modules::ofed
