#pragma once
/// kernel: the running kernel release (and boot id, which apply uses to see a reboot happen).
/// Desired key `kernel: 5.15.0-119-generic`; a change installs the kernel packages and reboots.
#include "modules/module.h"

namespace plumb::modules::kernel {

class KernelModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

}  // namespace plumb::modules::kernel
