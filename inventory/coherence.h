#pragma once
/// Pin coherence: rules kept as data in schemas/rules/compat.yaml (compiled in), checked against
/// each node's merged desired state. The engine knows three rule kinds (min_version_table,
/// equal, capture_equal; documented in the YAML); the versions and the rules are data.
#include <map>
#include <string>
#include <vector>

#include "inventory/model.h"
#include "schemas/diagnostics.h"
#include "schemas/result.h"

namespace plumb::inventory {

struct CompatRow {
  std::string match;    ///< version prefix ("12.4", "12.4.1")
  std::string min;      ///< minimum version of the object pin
  std::string release;  ///< where the row comes from ("CUDA 12.4 GA")
};

struct CompatRule {
  std::string id, kind, why;
  std::string subject, object, table;       ///< min_version_table
  std::string a, b, a_capture, b_capture;   ///< equal, capture_equal
};

struct CompatRules {
  std::map<std::string, std::vector<CompatRow>> tables;
  std::vector<CompatRule> rules;
};

/// Parses rules in compat.yaml's format (`file` names it in diagnostics).
Result<CompatRules> ParseCompatRules(const std::string& yaml_text, const std::string& file);

/// The rules compiled into plumb (schemas/rules/compat.yaml), parsed once.
const Result<CompatRules>& BuiltinCompatRules();

/// Checks each node's desired state against `rules`. A violation is an error (code
/// "coherence.<rule id>") that names the rule and both pins with their file:line:column; nodes
/// sharing the same two pins (same stack) are reported once, with the count of nodes affected.
/// A version missing from a table is a warning ("coherence.unknown-version").
void CheckCoherence(const CompatRules& rules, const std::map<std::string, NodeDesired>& desired,
                    Diagnostics& diags);

}  // namespace plumb::inventory
