#pragma once
/// services: systemd unit-file state and run state of every service.
/// Desired `services: { name: { enabled: bool, active: bool } }` ("name" or "name.service").
/// enable/disable: no disruption; start/stop: service-restart.
#include "modules/module.h"

namespace plumb::modules::services {

class ServicesModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

/// "nvidia-fabricmanager" -> "nvidia-fabricmanager.service"; names with a unit suffix unchanged.
std::string UnitName(std::string_view name);

}  // namespace plumb::modules::services
