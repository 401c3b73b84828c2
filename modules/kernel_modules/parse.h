#pragma once
/// Pure parser for kernel module parameters: `grep -H '' /sys/module/*/parameters/*`, i.e.
/// "/sys/module/<module>/parameters/<param>:<value>" lines.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::kernel_modules {

using Params = std::map<std::string, std::map<std::string, std::string>>;
/// A line without the sysfs prefix continues the previous value (a multi-line parameter);
/// "grep: " error lines are skipped.
Result<Params> ParseModuleParams(std::string_view text);
/// Part params -> {"modules": {module: {param: value}}}.
Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts);
/// Does a desired value equal a sysfs one? Exact, and booleans "Y"/"N" also match 1/0,
/// true/false, y/n.
bool ParamMatches(std::string_view want, std::string_view have);
/// Module and parameter names plumb writes: [A-Za-z0-9_-]+.
bool IsSafeName(std::string_view s);

}  // namespace plumb::modules::kernel_modules
