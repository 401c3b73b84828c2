#pragma once
/// The Redfish-backed modules (firmware, bios, power), for the module registry and the
/// Redfish-only gather. The registry (modules/registry) lists them among all modules.
#include <vector>

#include "modules/module.h"

namespace plumb::modules {

/// New instances of firmware, bios and power, in that order.
std::vector<ModulePtr> BmcModules();

}  // namespace plumb::modules
