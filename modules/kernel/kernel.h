#pragma once
/// kernel: the running kernel release (and boot id, which apply uses to see a reboot happen).
/// Desired key `kernel: 5.15.0-119-generic`; a change installs the kernel packages and reboots.
#include "modules/module.h"

namespace plumb::modules::kernel {

/// The commands that make `release` the kernel the next boot runs: rpm `grubby --set-default
/// /boot/vmlinuz-R`; dpkg GRUB_DEFAULT=saved in /etc/default/grub, `update-grub`,
/// `grub-set-default 'Advanced options for Ubuntu>Ubuntu, with Linux R'`. None for others.
std::vector<std::string> KernelDefaultCommands(std::string_view release, std::string_view manager);

class KernelModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

}  // namespace plumb::modules::kernel
