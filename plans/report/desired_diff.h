#pragma once
/// `plumb diff REV1 REV2`: how the desired state changes between two commits of the cluster
/// repo, per node and key, before anything touches a node. Pure over two DesiredByNode, so a PR
/// pipeline can post it (markdown) without any access to the cluster.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/module.h"
#include "plans/plan/planner.h"
#include "schemas/diagnostics.h"

namespace plumb::plans::report {

struct KeyChange {
  std::string key;               ///< "nvidia.driver"
  std::string pointer;           ///< "/nvidia/driver"
  nlohmann::json before, after;  ///< null when the key is absent on that side
  Location origin;               ///< where `after` is written (where `before` was, if removed)
  /// The most this change can disturb a node (keys.h KeyDisruption): the diff sees no node.
  modules::Disruption disruption = modules::Disruption::kNone;
};

struct NodeDiff {
  enum class Kind { kChanged, kAdded, kRemoved };
  std::string node;
  Kind kind = Kind::kChanged;
  std::string stack_before, stack_after, rollout_before, rollout_after;
  std::vector<KeyChange> changes;   ///< by key; stack/rollout renames are not key changes
  modules::Disruption disruption = modules::Disruption::kNone;   ///< max over `changes`
};
const char* NodeDiffKindName(NodeDiff::Kind k);

struct DesiredDiff {
  std::string from, to;             ///< the commits (or refs) compared, for the headings
  std::string cluster;
  std::vector<NodeDiff> nodes;      ///< nodes whose desired state, stack or rollout differ
  int unchanged = 0;                ///< nodes on both sides with nothing different
};

/// Every node present on either side whose desired keys, stack or rollout differ.
DesiredDiff DiffDesired(const DesiredByNode& before, const DesiredByNode& after);

/// Text, nodes with identical changes collapsed into one host list.
std::string DesiredDiffToText(const DesiredDiff& d);
nlohmann::json DesiredDiffToJson(const DesiredDiff& d);
/// GitHub-flavoured markdown for a pull-request comment (tables, host lists collapsed).
std::string DesiredDiffToMarkdown(const DesiredDiff& d);

}  // namespace plumb::plans::report
