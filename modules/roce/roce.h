#pragma once
/// roce: RoCE QoS of the node's mlx5 Ethernet netdevs: priority trust state and PFC priorities
/// (`mlnx_qos`), RoCE ECN per priority (MLNX_OFED's /sys/class/net/<if>/ecn sysfs). Desired
/// `fabric.roce: { interfaces: [..], trust: dscp, pfc: [3], ecn: [3] }` must hold on every
/// listed netdev (default: every mlx5 Ethernet netdev). `pfc` and `ecn` are the whole set of
/// priorities with the feature on: every other priority is turned off. ECN means both halves of
/// RoCE congestion control on that priority: the notification point (roce_np, the receiver
/// marking CNPs) and the reaction point (roce_rp, the sender slowing down).
///
/// These are runtime settings: the NIC forgets them at a reboot or driver reload. So apply also
/// keeps each one it makes (one command line per netdev and setting in /etc/plumb/roce.d) and
/// installs plumb-roce.service, a oneshot unit that replays them at boot. A setting right on the
/// NIC but not kept, or the unit not enabled, is a change of its own (no disruption).
#include "modules/module.h"

namespace plumb::modules::roce {

class RoceModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

/// The commands one action runs, in order (empty when the action is not one of this module's
/// changes, or carries a value plumb refuses to write). Every value is shell-quoted.
std::vector<std::string> ApplyCommands(const Action& action);

}  // namespace plumb::modules::roce
