#pragma once
/// Per-node merge of the desired state. The precedence, lowest to highest:
///   1. the stack chosen for the node: the nearest group that names one. A group's own `stack`
///      beats its parents'; among the node's groups (and among a group's parents) the later
///      listed wins;
///   2. group `overrides`, applied ancestors first, then the node's groups in listed order (each
///      group once, at its first place in that walk), so a child beats its parents and a later
///      group beats an earlier one.
/// Merging is deep by key: mappings merge, scalars and lists replace. The rollout policy is
/// picked like the stack. Every leaf keeps the file:line:column it came from.
#include <optional>
#include <string>
#include <vector>

#include "inventory/model.h"

namespace plumb::inventory {

/// The groups of `node` in merge order: for each of its groups in listed order, that group's
/// parents (recursively, in listed order) and then the group; a group already placed is skipped.
/// Unknown groups and cycles are skipped here (the semantic checks report them).
std::vector<std::string> MergeOrder(const Cluster& cluster, const Node& node);

/// The bastion `node` is reached through (Node::ssh_jump): its own, the nearest group's, the
/// default; "" when none or "none".
std::string JumpFor(const Cluster& cluster, const Node& node);

/// The merged desired state of `node`. `stack` is empty when no group names one (an error the
/// semantic checks report), and then `desired` holds the overrides only.
NodeDesired ResolveNode(const Cluster& cluster, const Node& node);

/// Deep-merges `src` into `dst` (see above); `src_origins` and `layer` describe where src's
/// leaves came from. Pointers are relative to the desired-state root.
void MergeInto(nlohmann::json& dst, OriginMap& dst_origins, std::map<std::string, std::string>& layers,
               const nlohmann::json& src, const OriginMap& src_origins, const std::string& layer,
               const std::string& pointer = "");

}  // namespace plumb::inventory
