#pragma once
/// nvidia_driver: the loaded and installed NVIDIA driver, nvidia-smi's view (NVML state, GPUs,
/// persistence mode) and the fabric manager (version, service state).
/// Desired keys: nvidia.driver (install + reboot), nvidia.fabricmanager (install, drain),
/// nvidia.persistence_mode (nvidia-smi -pm, no disruption).
#include "modules/module.h"

namespace plumb::modules::nvidia_driver {

class NvidiaDriverModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

}  // namespace plumb::modules::nvidia_driver
