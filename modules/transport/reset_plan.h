#pragma once
/// Choosing ResetType values (pure). BMCs support different subsets of the ResetType enum
/// (iDRAC9 has no GracefulRestart, IBM bmcweb no ForceRestart): never send a value outside the
/// advertised list; map what the caller wants onto what is there.
#include <string>
#include <vector>

#include "modules/transport/bmc.h"

namespace plumb::transport {

/// The sequences to try for `kind`, best first; each is one or two ResetTypes sent in order
/// (two: off, wait for PowerState Off, then on). `allowable` empty = the BMC advertises no list
/// (every standard sequence is a candidate). `power_state` "Off": a reboot or hard reboot
/// becomes "On"; "On" with kind kOn: nothing to do (empty result with no error is signalled by
/// {{}}). A graceful off (IsGracefulOff) comes before ForceOff wherever both would do: "off"
/// and a reboot by off + on shut the OS down first, and RedfishClient::Reset forces only when
/// the graceful one has not powered the system off in time.
/// GracefulShutdown, or "Off": not in the ResetType enum, HPE Cray EX's ActionInfo lists it
/// beside ForceOff and On as its graceful off. "Off" is sent only where it is advertised.
bool IsGracefulOff(const std::string& reset_type);

std::vector<std::vector<std::string>> ResetCandidates(ResetKind kind,
                                                      const std::vector<std::string>& allowable,
                                                      const std::string& power_state);

}  // namespace plumb::transport
