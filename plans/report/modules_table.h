#pragma once
/// `plumb modules`: the module registry as a table - each module, the desired keys it checks,
/// what it reads, how it changes a node and how much that disturbs it. The README's module table
/// is the markdown (a test keeps the two equal). Tested in tests/plans/report/modules_table_test.cc.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/module.h"

namespace plumb::plans::report {

/// One row per module: "| name (BMC) | reads | `desired.key` | changes | disruption |".
std::string ModulesMarkdown(const std::vector<const modules::Module*>& mods);

/// One object per module: name, owns, channel, after, reads, changes, disruption, kind, on_demand.
nlohmann::json ModulesJson(const std::vector<const modules::Module*>& mods);

}  // namespace plumb::plans::report
