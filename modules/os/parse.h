#pragma once
/// Pure parser for /etc/os-release (os-release(5)).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::os {

/// KEY=VALUE lines; values unquoted, "double" or 'single' quoted (backslash escapes in double
/// quotes); comments and blank lines skipped. Anything else is a located error.
Result<std::map<std::string, std::string>> ParseOsRelease(std::string_view text);
/// Part "os_release" -> {"id", "version_id", "pretty_name", "id_like": [...], "family"}.
Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::os
