#pragma once
/// Pure parser for plumb's node marker /var/lib/plumb/marker.json:
/// {"commit": "<40 hex>", "run": "<run id>", "time": "<RFC 3339>"}.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::marker {

struct Marker {
  std::string commit, run, time;
};
Result<Marker> ParseMarker(std::string_view text);
/// Part marker -> {"present": bool, "commit", "run", "time"} (nulls when absent).
Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts);
bool IsCommit(std::string_view s);
/// Run ids and times plumb writes: [A-Za-z0-9._:+-]{1,128}.
bool IsToken(std::string_view s);

}  // namespace plumb::modules::marker
