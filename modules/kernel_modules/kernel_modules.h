#pragma once
/// kernel_modules: loaded modules' parameters (/sys/module/<m>/parameters). Desired
/// `kernel_modules: { nvidia: { NVreg_EnableStreamMemOPs: "1" } }`; a change is persisted as
/// "options <m> <p>=<v>" in /etc/modprobe.d/plumb.conf (atomic rewrite) and takes effect at
/// the reboot it requires.
#include "modules/module.h"

namespace plumb::modules::kernel_modules {

inline constexpr std::string_view kPersistFile = "/etc/modprobe.d/plumb.conf";

class KernelModulesModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

/// The command that writes "options <m> <p>=<v>" into kPersistFile atomically.
std::string PersistCommand(std::string_view module, std::string_view param, std::string_view value);

}  // namespace plumb::modules::kernel_modules
