#pragma once
/// power: the ComputerSystem's power state and health, read from the BMC (works when the OS is
/// down). Facts (modules/power/facts.schema.json): {"power_state": "On", "health": "OK",
/// "health_rollup": "OK", "state": "Enabled", "model", "manufacturer", "serial_number",
/// "system": "/redfish/v1/Systems/1"}; missing properties are null.
/// Desired (optional): `power: On | Off`; apply = ComputerSystem.Reset (On / the graceful off the
/// BMC offers, ForceOff only when that has not powered it off in time: RedfishClient::Reset).
#include "modules/module.h"

namespace plumb::modules::power {

class PowerModule : public Module {
 public:
  const ModuleInfo& Info() const override;
  Result<Facts> ProbeBmc(transport::Bmc& bmc) const override;
  std::string BmcSummary(const Facts& facts) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

/// Pure: a ComputerSystem resource -> power facts.
Facts PowerFactsFromSystem(const nlohmann::json& system, const std::string& link);

}  // namespace plumb::modules::power
