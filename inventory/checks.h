#pragma once
/// Semantic checks of a loaded cluster, after the schemas: what no JSON Schema can say.
/// Each adds located diagnostics and goes on, so one run reports every problem.
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "inventory/model.h"
#include "schemas/diagnostics.h"
#include "schemas/yaml_json.h"

namespace plumb::inventory {

/// Where things were written, for locating what the checks find.
struct LoadedDocs {
  const schemas::YamlDocument* inventory = nullptr;   ///< inventory.yaml (never null in checks)
  std::vector<std::string> node_pointers;             ///< cluster.nodes[i] -> "/nodes/i"
  std::map<std::string, schemas::Marks> rollouts;     ///< rollout name -> its file's marks
};

/// Duplicate node names, addresses and BMC endpoints; groups a node names that do not exist.
void CheckNodes(const Cluster& cluster, const LoadedDocs& docs, Diagnostics& diags);

/// Unknown parent groups, stacks and rollouts (with "did you mean"); cycles in `parents`, each
/// reported once as a path ("a -> b -> a").
void CheckGroups(const Cluster& cluster, const LoadedDocs& docs, Diagnostics& diags);

/// failure_domain.by must name rack, leaf, nvlink_domain or a label the nodes carry; nodes
/// without it are a warning.
void CheckRollouts(const Cluster& cluster, const LoadedDocs& docs, Diagnostics& diags);

/// Waivers: real calendar dates; expired ones and globs that match no node are warnings.
void CheckWaivers(const Cluster& cluster, Diagnostics& diags);

/// A pinned key that nothing checks would never be compared or changed, and "no changes" would
/// be a silent "not looked at": every leaf of every stack's pins and every group's overrides
/// must pass `is_checked` (the module registry's, which inventory/ cannot see: the caller
/// passes it). Errors "inventory.unchecked-key" at the value's file:line.
void CheckPinnedKeys(const Cluster& cluster,
                     const std::function<bool(std::string_view pointer)>& is_checked,
                     Diagnostics& diags);

}  // namespace plumb::inventory
