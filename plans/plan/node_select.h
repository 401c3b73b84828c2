#pragma once
/// --limit: which nodes a command touches.
#include <optional>
#include <string_view>
#include <vector>

#include "inventory/model.h"
#include "schemas/result.h"

namespace plumb::plans {

/// Nodes of `cluster` matching `pattern`, in inventory order. The pattern is a comma list of
/// terms; a node is selected when any term matches:
///   n[1-3,5], gpu*, r[1-2]-n*  host lists and globs (inventory/node_pattern.h)
///   @h100                      members of group h100, directly or through a child group
///   !gpu003, !@h100            exclude (applied after the positive terms; alone = all but)
/// Empty pattern = every node (the caller passes "" for a --limit left out). A term that
/// matches no node is an error ("limit.no-match"), naming the term, so a typo never silently
/// narrows a run to nothing; a pattern that is not "" but names no node (",", " ", "!") is one
/// too ("limit.empty", LimitNamesNoNode), so it never widens a run to every node.
Result<std::vector<const inventory::Node*>> SelectNodes(const inventory::Cluster& cluster,
                                                        std::string_view pattern);

/// The "limit.empty" error for a --limit given as `pattern` that names no node (empty, only
/// commas and blanks, only '!'), or nullopt when it names some. The CLI refuses such a --limit
/// before reading anything (cli/limit_check.cc); SelectNodes and SelectPlanNodes refuse it too.
std::optional<Diagnostic> LimitNamesNoNode(std::string_view pattern);

}  // namespace plumb::plans
