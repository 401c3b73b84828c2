#include "inventory/model.h"

#include <algorithm>

namespace plumb::inventory {

std::string Node::Domain(const std::string& by) const {
  if (by == "rack") return rack;
  if (by == "leaf") return leaf;
  if (by == "nvlink_domain") return nvlink_domain;
  auto it = labels.find(by);
  return it == labels.end() ? std::string() : it->second;
}

int RolloutPolicy::MaxUnavailable(int total) const {
  if (!max_unavailable_is_percent) return std::max(1, max_unavailable_count);
  // Percent rounds down, as Kubernetes does for maxUnavailable, but never below one node:
  // a policy that can never take a node out could never apply anything.
  return std::max(1, total * max_unavailable_count / 100);
}

const Node* Cluster::FindNode(const std::string& n) const {
  for (const auto& node : nodes)
    if (node.name == n) return &node;
  return nullptr;
}

}  // namespace plumb::inventory
