#pragma once
/// Pure parsers for the InfiniBand probe: `ibstat` (ports: state, physical state, rate, link
/// layer, CA firmware) and `ibv_devinfo` (active MTU, which ibstat does not show).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::infiniband {

struct Port {
  std::string ca, ca_type, firmware;
  int port = 0;
  std::string state, physical_state, link_layer;
  std::optional<double> rate_gbps;
  std::optional<int> mtu;
};
/// Ports in output order. "ibwarn:"/"ibpanic:" lines are collected in `warnings`.
Result<std::vector<Port>> ParseIbstat(std::string_view text, std::vector<std::string>* warnings = nullptr);
/// (ca, port) -> active MTU in bytes. "No IB devices found" gives an empty map.
Result<std::map<std::pair<std::string, int>, int>> ParseIbvDevinfo(std::string_view text);
/// Parts ibstat, devinfo -> {"present", "ports": [...], "warnings": [...]}.
Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::infiniband
