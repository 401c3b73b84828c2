#pragma once
/// ib_health: the error counters of every Active InfiniBand port (`perfquery`), read in
/// gather's probe. Desired `health.ib_health: { max_counters: { SymbolErrorCounter: 10, ... } }`
/// sets the most each counter may read; every counter of kDefaultMaxCounters is held to 0
/// unless named there, and any other perfquery counter can be named too. `max_counters: {}`
/// pins the defaults.
///
/// The counters count since they were last reset (or the HCA restarted): after a repair, reset
/// them (`perfquery -R -C <ca> -P <port>`) or the check keeps failing. Port state, physical state
/// and rate are the infiniband module's (fabric.infiniband); a port that is not Active has no
/// counters to read here and is left to it.
#include <string_view>

#include "modules/health_util.h"

namespace plumb::modules::ib_health {

class IbHealthModule final : public HealthModule {
 public:
  IbHealthModule();
  const ModuleInfo& Info() const override;
  /// The Active InfiniBand ports from `ibstat`, then `perfquery -C <ca> -P <port>` for each as
  /// part "perfquery.<ca>.<port>", without the traffic counters (data, packets, wait): they
  /// move every second and would make every read of the node differ.
  std::string ProbeScript() const override;
  std::vector<CheckResult> Checks(const nlohmann::json& desired, const Facts& facts) const override;
};

/// The error counters held to 0 by default: the parser's kErrorCounters (IBA PortCounters)
/// but VL15Dropped, which counts subnet-management packets dropped while the fabric comes up
/// and the subnet manager sweeps (routine on a healthy fabric; name it in max_counters to
/// check it).
inline constexpr std::string_view kDefaultMaxCounters[] = {
    "SymbolErrorCounter",        "LinkErrorRecoveryCounter",    "LinkDownedCounter",
    "PortRcvErrors",             "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",          "PortXmitConstraintErrors",    "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors",  "ExcessiveBufferOverrunErrors"};

}  // namespace plumb::modules::ib_health
