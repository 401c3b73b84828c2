#pragma once
/// Small helpers shared by the Redfish-backed modules (firmware, bios, power).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "modules/transport/bmc.h"
#include "schemas/result.h"

namespace plumb::modules {

/// `obj[key]["@odata.id"]`, or "" when absent.
std::string LinkOf(const nlohmann::json& obj, std::string_view key);

/// Typed-but-forgiving equality for desired vs observed BIOS values and versions: equal JSON, or
/// a number and a string that print the same (AMI reports some integers, YAML may quote them).
bool SameValue(const nlohmann::json& a, const nlohmann::json& b);

/// The node's ComputerSystem resource (first member of Systems).
Result<nlohmann::json> GetSystem(transport::Bmc& bmc, std::string* link = nullptr);

/// The error for an Apply that needs the BMC when the node has none.
Diagnostic NoBmc(std::string_view module, std::string_view action_id);

}  // namespace plumb::modules
