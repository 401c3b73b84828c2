#pragma once
/// The Redfish-backed modules (firmware, bios, power): the registry's modules whose channel is
/// the BMC, in registry order. No second list: a new BMC module is one registry line too.
#include <vector>

#include "modules/module.h"

namespace plumb::modules {

/// The registry's Channel::kBmc modules; the pointers live for the whole program.
const std::vector<const Module*>& BmcModules();

}  // namespace plumb::modules
