#pragma once
/// Helpers the module implementations share: framed-part access with module-coded errors, the
/// package-manager part, and Action construction.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/module.h"
#include "modules/probe_script.h"

namespace plumb::modules {

/// The parts of a module's section; a framing error is re-coded "probe.<module>".
Result<std::vector<ProbePart>> PartsOf(std::string_view module, std::string_view out);

/// Snippet text reporting the node's package manager as part "pm": "dpkg", "rpm" or "none".
inline constexpr std::string_view kPackageManagerSnippet =
    "plumb_begin pm; if command -v dpkg-query >/dev/null 2>&1; then echo dpkg; "
    "elif command -v rpm >/dev/null 2>&1; then echo rpm; else echo none; fi; plumb_end pm 0";
/// "dpkg", "rpm" or "none" from the "pm" part (or "none" when missing/garbled).
std::string PackageManagerOf(const std::vector<ProbePart>& parts);

/// An action with every field set; `params` default to an empty object.
Action MakeAction(std::string_view module, std::string id, std::string key, std::string pointer,
                  std::string summary, nlohmann::json before, nlohmann::json after,
                  Disruption disruption, nlohmann::json params = nlohmann::json::object());

/// A desired scalar as the string a tool would print: 10 -> "10", "x" -> "x", true -> "true".
std::string ScalarString(const nlohmann::json& v);
/// desired[a][b]... when every step is an object holding the key; nullptr otherwise.
const nlohmann::json* Lookup(const nlohmann::json& j, std::initializer_list<std::string_view> path);
/// A string field of `facts` or "" (facts may be any JSON; never throws).
std::string StringField(const nlohmann::json& facts, std::string_view key);

}  // namespace plumb::modules
