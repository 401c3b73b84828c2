#pragma once
/// kernel: the running kernel release (and boot id, which apply uses to see a reboot happen).
/// Desired key `kernel: 5.15.0-119-generic`; a change installs the kernel packages and reboots.
#include <string_view>

#include "modules/module.h"

namespace plumb::modules::kernel {

/// Debian/Ubuntu: the lines of grub.cfg that decide the next boot (as update-grub last wrote
/// them), "---", and the saved/next entry in grubenv. The probe's "boot" part, and what apply
/// reads to find the pin's entry and to see that it took (parse.h reads it).
inline constexpr std::string_view kGrubReadCommand =
    "grep -E '^[[:space:]]*(set default=|menuentry |submenu |linux[[:space:]])|^}' "
    "/boot/grub/grub.cfg; echo ---; grub-editenv list";

/// The commands that make `release` the kernel the next boot runs, as the plan shows them:
/// rpm `grubby --set-default /boot/vmlinuz-R`; dpkg GRUB_DEFAULT=saved in /etc/default/grub,
/// `update-grub`, then `grub-set-default` with the entry grub.cfg has for R (found by apply
/// after update-grub, and read back: the last line names it, it is not a command). None for
/// others.
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
