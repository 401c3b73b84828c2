#pragma once
/// NCCL is known by its package: libnccl2 (dpkg) or libnccl (rpm); the version string is the
/// package version ("2.21.5-1+cuda12.4"), which is what stacks pin.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::nccl {

/// Parts pkgs, pm -> {"manager", "version" (libnccl2/libnccl or null), "packages": {...}}.
Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::nccl
