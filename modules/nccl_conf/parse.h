#pragma once
/// Pure parser for /etc/nccl.conf, as NCCL reads it (src/misc/param.cc, setEnvFile): each line
/// `NAME=value`, split at the first '='; a line with no '=' is ignored; the first line of a name
/// wins (NCCL sets each with setenv(..., 0)). '#' lines are comments.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::nccl_conf {

/// Part "conf" -> {"present": bool, "values": {NAME: value}} (present false and no values when
/// the file does not exist).
Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts);
/// Names plumb writes: NCCL_ then [A-Z0-9_], at most 64 characters.
bool IsSafeName(std::string_view name);
/// Values plumb writes: [A-Za-z0-9_.,:=^/+-], not starting with '-', at most 256 characters
/// (interface and HCA lists like "=mlx5_0:1,mlx5_1:1", "^docker0", numbers).
bool IsSafeValue(std::string_view value);

}  // namespace plumb::modules::nccl_conf
