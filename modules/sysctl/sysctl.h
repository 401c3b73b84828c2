#pragma once
/// sysctl: every kernel parameter `sysctl -a` shows. Desired `sysctl: { key: value }`; a change
/// is `sysctl -w` now plus the key persisted in /etc/sysctl.d/90-plumb.conf (rewritten
/// atomically: temp file + mv), no disruption.
#include "modules/module.h"

namespace plumb::modules::sysctl {

/// Where plumb persists the values it sets.
inline constexpr std::string_view kPersistFile = "/etc/sysctl.d/90-plumb.conf";

class SysctlModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override { return "plumb_run values sysctl -a"; }
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

/// The command that writes `key = value` into kPersistFile atomically, replacing that key's
/// earlier line and keeping every other line.
std::string PersistCommand(std::string_view key, std::string_view value);

}  // namespace plumb::modules::sysctl
