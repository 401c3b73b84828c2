#pragma once
/// nccl_conf: the NCCL settings an administrator pins system-wide in /etc/nccl.conf (NCCL reads
/// it at every ncclCommInit: `NAME=value` lines, the first line of a name wins, an environment
/// variable wins over the file). Desired `nccl_conf: { NCCL_IB_HCA: "=mlx5_0,mlx5_1",
/// NCCL_SOCKET_IFNAME: "=ens1f0" }`; keys the stack does not name are left as they are. A
/// change rewrites that key's line (temp file + mv, the other lines kept), no disruption: the
/// next job started reads it.
#include "modules/module.h"

namespace plumb::modules::nccl_conf {

/// The file NCCL reads system-wide.
inline constexpr std::string_view kConfFile = "/etc/nccl.conf";

class NcclConfModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

/// The command that sets `name=value` in kConfFile atomically: every earlier line of that name
/// dropped, every other line kept, the new line last. Both are quoted; the caller checks them
/// (IsSafeName, IsSafeValue) first.
std::string SetCommand(std::string_view name, std::string_view value);

}  // namespace plumb::modules::nccl_conf
