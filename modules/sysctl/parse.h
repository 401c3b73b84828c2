#pragma once
/// Pure parser for `sysctl -a`: "key = value" lines (multi-value keys tab-separated).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::sysctl {

struct SysctlValues {
  std::map<std::string, std::string> values;
  std::vector<std::string> unreadable;   ///< "permission denied on key" / "reading key" lines
};
Result<SysctlValues> ParseSysctlAll(std::string_view text);
/// Part values -> {"values": {...}, "unreadable": [...]}.
Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts);
/// Whitespace runs (the kernel's tabs, a user's spaces) collapsed to one space, ends trimmed.
std::string NormalizeValue(std::string_view v);
/// Keys plumb accepts to write: [A-Za-z0-9_.*/-]+, not starting with '-'.
bool IsSafeKey(std::string_view key);

}  // namespace plumb::modules::sysctl
