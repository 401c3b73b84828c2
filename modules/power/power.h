#pragma once
/// power: the ComputerSystem's power state and health, read from the BMC (works when the OS is
/// down). Facts (schemas/facts/power): {"power_state": "On", "health": "OK",
/// "health_rollup": "OK", "state": "Enabled", "model", "manufacturer", "serial_number",
/// "system": "/redfish/v1/Systems/1"}; missing properties are null.
/// Desired (optional): `power: On | Off`; apply = ComputerSystem.Reset (On / GracefulShutdown).
#include "modules/module.h"

namespace plumb::modules::power {

class PowerModule : public Module {
 public:
  std::string_view Name() const override { return "power"; }
  bool HasBmcProbe() const override { return true; }
  Result<Facts> ProbeBmc(transport::Bmc& bmc) const override;
  bool Wants(const nlohmann::json& desired) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  Status Apply(NodeContext& ctx, const Action& action) const override;
};

/// Pure: a ComputerSystem resource -> power facts.
Facts PowerFactsFromSystem(const nlohmann::json& system, const std::string& link);

}  // namespace plumb::modules::power
