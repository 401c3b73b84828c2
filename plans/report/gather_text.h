#pragma once
/// What `plumb gather` prints of what it read: a text table (one line per node, one per module)
/// and, for --format json, the snapshot's "summary" object.
#include <string>

#include <nlohmann/json.hpp>

#include "plans/observe/observed.h"
#include "schemas/result.h"

namespace plumb::plans::report {

/// Why a node could not be read, in a word: "refused", "timeout", "auth", "host key",
/// "host key changed", "io", "probe error", else the diagnostic's code ("error" when none).
std::string UnreadableReason(const Diagnostic& d);

/// Per node: a line with its status, then one compact line per module and one ERROR line per
/// module problem (modules::ModuleProblems: a module read in part shows both); unreadable nodes
/// with their reason and hint; a closing count that names the nodes with module errors.
std::string GatherText(const ObservedState& s, double wall_s);

/// {nodes, read, unreadable, module_errors, reasons: {node: reason}, wall_s}.
nlohmann::json GatherSummaryJson(const ObservedState& s, double wall_s);

/// One line for a module's facts: top-level scalars as key=value, containers as key[n]/key{n},
/// cut to `width` with "...".
std::string CompactFacts(const nlohmann::json& facts, size_t width = 100);

}  // namespace plumb::plans::report
