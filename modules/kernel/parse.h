#pragma once
/// Pure parsers for the kernel module's probe: `uname -r` and the boot id.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::kernel {

/// `uname -r`: exactly one token like "5.15.0-119-generic".
Result<std::string> ParseUnameRelease(std::string_view text);
/// /proc/sys/kernel/random/boot_id: one UUID.
Result<std::string> ParseBootId(std::string_view text);
/// Parts "release", "boot_id", "pm" -> {"release", "boot_id", "manager", "part_errors"?}
/// (schemas/facts/kernel). Each part is read on its own (modules/part_facts.h).
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::kernel
