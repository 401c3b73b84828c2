#pragma once
/// Pure parser for `ofed_info -s`: "MLNX_OFED_LINUX-23.10-1.1.9.0:" or (DOCA host)
/// "OFED-internal-24.07-0.6.1:".
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::ofed {

struct OfedInfo {
  std::string version;   ///< "23.10-1.1.9.0"
  std::string flavor;    ///< "mlnx_ofed" or "doca"
  std::string raw;       ///< the line without the trailing ':'
};
Result<OfedInfo> ParseOfedInfo(std::string_view text);
/// Parts ofed_info, pm -> {"manager", "version", "flavor", "raw"} (nulls when not installed).
Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts);
/// "24.07-0.6.1.0" matches "24.07-0.6.1": components split on '.' and '-' compare equal once
/// trailing zero components are dropped.
bool OfedVersionMatches(std::string_view want, std::string_view have);

}  // namespace plumb::modules::ofed
