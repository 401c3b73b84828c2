#pragma once
/// Reading a BMC's firmware: the members of UpdateService.FirmwareInventory and
/// UpdateService.SoftwareInventory (some BMCs list firmware only under the latter), each once,
/// and the view of the node's system that scopes them on a BMC with several (scope.h).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/firmware/scope.h"
#include "modules/transport/bmc.h"
#include "schemas/result.h"

namespace plumb::modules::firmware {

struct InventoryItem {
  nlohmann::json member;
  std::string collection;   ///< "FirmwareInventory" or "SoftwareInventory"
};

/// Every member of both collections the UpdateService links (a member listed in both, by the
/// same @odata.id, once). An error when it links neither.
Result<std::vector<InventoryItem>> ReadInventory(transport::Bmc& bmc, const nlohmann::json& update_service);

/// The node's system and the others with their chassis, when the BMC manages several systems;
/// the only system alone (no others, no chassis read) when it manages one, for the short names
/// of its prefixed Ids; nullopt when it lists none. An error when the node names no system on
/// a BMC with several (transport/system_select.h).
Result<std::optional<SystemsView>> ReadSystemsView(transport::Bmc& bmc);

}  // namespace plumb::modules::firmware
