#pragma once
/// Pure parser for the InfiniBand health probe: `perfquery` port counters, in the default form
/// ("# Port counters: Lid 1 port 1 (CapMask: 0x5A00)" then "SymbolErrorCounter:..............0"
/// dotted lines, 32-bit data counters) and the extended form `perfquery -x` ("# Port extended
/// counters: ...", 64-bit PortXmitData and friends).
///
/// Port state, physical state and rate come from `ibstat`, whose parser is
/// modules/infiniband/parse.h (infiniband::ParseIbstat): use it for those, do not re-parse
/// ibstat here.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::ib_health {

/// Probe part names: one part per port, "perfquery.<ca>.<port>" (e.g. "perfquery.mlx5_0.1"),
/// holding `perfquery -C <ca> -P <port>` and, optionally after it, `perfquery -x -C ... -P ...`.
inline constexpr std::string_view kPerfqueryPartPrefix = "perfquery.";

/// The IBA PortCounters error counters (IB spec vol. 1, 16.1.3.5), as perfquery names them.
/// Each should stay 0 on a healthy link; thresholds are the stack's.
inline constexpr std::string_view kErrorCounters[] = {
    "SymbolErrorCounter",        "LinkErrorRecoveryCounter",    "LinkDownedCounter",
    "PortRcvErrors",             "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",          "PortXmitConstraintErrors",    "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors",  "ExcessiveBufferOverrunErrors", "VL15Dropped"};

/// One "# ... counters: ..." block.
struct PortCounters {
  int line = 0;                  ///< the header's line (the first counter's without a header)
  bool extended = false;         ///< "# Port extended counters"
  std::optional<int> lid;
  std::optional<int> port;       ///< nullopt for "all ports" or without a header
  std::string cap_mask;          ///< "0x5A00", "" when not printed
  /// Counter name -> value: every decimal "Name:....value" line. PortSelect, CounterSelect
  /// and CounterSelect2 (selectors, not counters) are left out.
  std::map<std::string, uint64_t> counters;
};

/// Every block, in order. Fails (located, "probe.ib_health") on the diagnostics' own messages
/// ("ibwarn: ...", "perfquery: iberror: failed: ...", "ibpanic: ..."), on a line that is not a
/// header, a "Name:...value" line or blank, on a counter whose value is not a decimal number,
/// and on output without any counter.
Result<std::vector<PortCounters>> ParsePerfquery(std::string_view text);

/// Parts perfquery.<ca>.<port> -> {"present": bool,
///   "ports": [{"ca", "port", "lid": int | null, "counters": {name: int},
///              "error_total": sum of kErrorCounters present}]}
///   (+ "part_errors"?). In a part holding both forms, the extended form's values win (its data
/// counters are 64-bit, the default form's saturate at 2^32-1). Ports are in part order; a
/// part whose name is not perfquery.<ca>.<port> is ignored. Each part is read on its own
/// (modules/part_facts.h): one port's failed perfquery costs that port only.
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::ib_health
