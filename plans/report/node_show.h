#pragma once
/// What `plumb show NODE` prints: one node's merged desired state, every leaf with the
/// file:line it came from and the layer (stack or group) that set it, as text or JSON.
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "inventory/load.h"
#include "inventory/model.h"

namespace plumb::plans::report {

/// Leaves sorted by key: "key  value  origin  (layer)" lines under a header naming the node,
/// its domains, merge order, stack and rollout.
std::string NodeShowText(const inventory::Cluster& c, const inventory::Node& node,
                         const inventory::NodeDesired& nd);
/// {"node", "address", "bmc", ..., "desired", "origins": {pointer: {file, line, column, layer}}}.
nlohmann::json NodeShowJson(const inventory::Cluster& c, const inventory::Node& node,
                            const inventory::NodeDesired& nd);

/// `plumb show NODE` of a repo that loaded: the node in `format` (text, json) on `out`; an
/// unknown node is an error on `err`, with the nearest name as a hint; text of the working tree
/// repeats the load's warnings on `err` first. Returns the "show" exit code.
int ShowNode(const inventory::LoadedCluster& lc, const std::string& node, const std::string& format,
             std::ostream& out, std::ostream& err);

}  // namespace plumb::plans::report
