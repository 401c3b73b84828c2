#pragma once
/// infiniband: every IB port's state, physical state, rate, link layer, MTU and CA firmware.
/// Desired `fabric.infiniband: { state: ACTIVE, rate_gbps: 400, mtu: 4096 }` must hold on every
/// port whose link layer is InfiniBand. A mismatch is a drain-level action that plumb cannot
/// fix in-band (cable, switch port, subnet manager, partition MTU): its Apply fails with
/// "apply.manual" saying so.
#include "modules/module.h"

namespace plumb::modules::infiniband {

class InfinibandModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override {
    return "plumb_run ibstat ibstat\nplumb_run devinfo ibv_devinfo";
  }
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

}  // namespace plumb::modules::infiniband
