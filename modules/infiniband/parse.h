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
/// What `ibstat` said. Its own diagnostics ("ibwarn: [pid] ...", "ibpanic: [pid] ...") come
/// through the probe's `2>&1` wherever stdio put them: first (stderr is unbuffered, stdout is
/// block-buffered into a pipe and flushed at exit), last (a terminal), or inside a stdout line
/// (where stdout's 4 KiB buffer had filled); the stdout around them is stitched back together.
struct Ibstat {
  std::vector<Port> ports;             ///< in output order
  std::vector<std::string> messages;   ///< the ibwarn/ibpanic lines, verbatim
  /// CAs ibstat says it could not read ("ibpanic: ... stat of IB device 'mlx5_3' failed: ...").
  /// ibstat stops there, so a CA listed after it was not read either.
  std::vector<std::string> unread_cas;
};
/// Any indentation (tabs or spaces, any width: only the nesting matters) and a last line
/// without '\n' are accepted: the probe's framing, not this parser, tells a cut section.
Result<Ibstat> ParseIbstat(std::string_view text);
/// (ca, port) -> active MTU in bytes. "No IB devices found" gives an empty map.
Result<std::map<std::pair<std::string, int>, int>> ParseIbvDevinfo(std::string_view text);
/// Parts ibstat, devinfo -> {"present", "ports": [...], "warnings": [...], "unread_cas"?,
/// "part_errors"?} (modules/infiniband/facts.schema.json). Each part is read on its own
/// (modules/part_facts.h): a bad ibv_devinfo costs the MTUs, not the ports.
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::infiniband
