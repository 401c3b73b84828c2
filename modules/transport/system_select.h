#pragma once
/// Choosing a node's ComputerSystem among the members of a BMC's Systems collection (pure).
/// Most BMCs manage one system; an HPE Cray EX blade's BMC manages two (Systems/Node0, Node1),
/// so a node on a shared BMC must say which one is its own (inventory: bmc_system).
#include <string>
#include <vector>

#include "schemas/result.h"

namespace plumb::transport {

/// The Id a member link stands for: its last path segment ("/redfish/v1/systems/1/" -> "1").
/// DSP0266 makes a resource's Id the final segment of its URI, so no GET is needed.
std::string LastSegment(const std::string& link);

/// The link of the system named `wanted` (its Id; exact match first, then case-insensitive as
/// iLO writes lower-case links), or the only member when `wanted` is empty. Errors name the BMC
/// (`bmc`), the node when known, and list the systems there are: code "bmc.system.ambiguous"
/// (several, none named), "bmc.system.unknown" (the named one is absent), "bmc.payload" (none).
Result<std::string> SelectSystem(const std::vector<std::string>& member_links,
                                 const std::string& wanted, const std::string& bmc,
                                 const std::string& node);

}  // namespace plumb::transport
