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

Location NodeDesired::OriginOf(std::string p) const {
  while (!p.empty()) {
    if (auto it = origins->find(p); it != origins->end()) return it->second;
    auto slash = p.rfind('/');
    if (slash == std::string::npos) break;
    p.resize(slash);
  }
  return {};
}

nlohmann::json NodeDesired::ValueAt(const std::string& pointer) const {
  if (pointer.empty()) return nullptr;
  try {
    nlohmann::json::json_pointer p(pointer);
    if (desired->contains(p)) return desired->at(p);
  } catch (const nlohmann::json::exception&) {
  }
  return nullptr;
}

const Node* Cluster::FindNode(const std::string& node_name) const {
  auto it = std::find_if(nodes.begin(), nodes.end(),
                         [&](const Node& n) { return n.name == node_name; });
  return it == nodes.end() ? nullptr : &*it;
}

int RolloutPolicy::MaxUnavailable(int total) const {
  int n = max_unavailable_count;
  if (max_unavailable_is_percent) n = total * max_unavailable_count / 100;  // round down
  return std::max(1, n);
}

}  // namespace plumb::inventory
