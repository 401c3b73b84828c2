#pragma once
/// What `plumb show NODE` prints: one node's merged desired state, every leaf with the
/// file:line it came from and the layer (stack or group) that set it, as text or JSON.
#include <string>

#include <nlohmann/json.hpp>

#include "inventory/model.h"

namespace plumb::plans::report {

/// Leaves sorted by key: "key  value  origin  (layer)" lines under a header naming the node,
/// its domains, merge order, stack and rollout.
std::string NodeShowText(const inventory::Cluster& c, const inventory::Node& node,
                         const inventory::NodeDesired& nd);
/// {"node", "address", "bmc", ..., "desired", "origins": {pointer: {file, line, column, layer}}}.
nlohmann::json NodeShowJson(const inventory::Cluster& c, const inventory::Node& node,
                            const inventory::NodeDesired& nd);

}  // namespace plumb::plans::report
