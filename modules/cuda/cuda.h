#pragma once
/// cuda: the CUDA toolkit /usr/local/cuda points at. Desired `nvidia.cuda: 12.4.1` installs
/// cuda-toolkit-12-4 at 12.4.1 (drain).
#include "modules/module.h"

namespace plumb::modules::cuda {

class CudaModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

}  // namespace plumb::modules::cuda
