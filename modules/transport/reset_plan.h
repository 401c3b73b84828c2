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
/// (every sequence is a candidate). `power_state` "Off": a reboot or hard reboot becomes "On";
/// "On" with kind kOn: nothing to do (empty result with no error is signalled by {{}}).
std::vector<std::vector<std::string>> ResetCandidates(ResetKind kind,
                                                      const std::vector<std::string>& allowable,
                                                      const std::string& power_state);

}  // namespace plumb::transport
