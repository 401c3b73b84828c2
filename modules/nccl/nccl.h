#pragma once
/// nccl: the NCCL library package. Desired `nvidia.nccl: 2.21.5-1+cuda12.4` installs
/// libnccl2 + libnccl-dev (dpkg) or libnccl + libnccl-devel (rpm) at that version (drain).
#include "modules/module.h"

namespace plumb::modules::nccl {

class NcclModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

}  // namespace plumb::modules::nccl
