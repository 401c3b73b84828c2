#pragma once
/// Pure parsers for systemd's listings: `systemctl show -p ...` (Key=Value),
/// `systemctl list-unit-files --type=service --no-legend --no-pager` and
/// `systemctl list-units --type=service --all --no-legend --no-pager --plain`.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::services {

/// Key=Value lines (blank lines between units are skipped; a later key wins).
Result<std::map<std::string, std::string>> ParseSystemctlShow(std::string_view text);

/// unit -> unit-file state ("enabled", "disabled", "static", "masked", ...).
Result<std::map<std::string, std::string>> ParseListUnitFiles(std::string_view text);

struct UnitState {
  std::string load, active, sub;
};
/// unit -> load/active/sub.
Result<std::map<std::string, UnitState>> ParseListUnits(std::string_view text);

/// Parts unit_files, units -> {"systemd", "units": {"x.service": {"enabled","load","active","sub"}},
/// "part_errors"?}. Each part is read on its own (modules/part_facts.h).
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::services
