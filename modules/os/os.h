#pragma once
/// os: the distribution (/etc/os-release). Facts only: no desired key, nothing to apply.
#include "modules/module.h"

namespace plumb::modules::os {

class OsModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override { return "plumb_cat os_release /etc/os-release"; }
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json&, const Facts&) const override { return {}; }
};

}  // namespace plumb::modules::os
