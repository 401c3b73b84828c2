#include "inventory/resolve.h"

#include <set>

#include "schemas/json_pointer.h"

namespace plumb::inventory {

using nlohmann::json;
using schemas::PointerAppend;
using schemas::PointerUnder;

namespace {

void Visit(const Cluster& c, const std::string& g, std::set<std::string>& placed,
           std::set<std::string>& on_path, std::vector<std::string>& out) {
  if (placed.count(g) || on_path.count(g)) return;  // placed already, or a cycle
  auto it = c.groups.find(g);
  if (it == c.groups.end()) return;
  on_path.insert(g);
  for (const auto& p : it->second.parents) Visit(c, p, placed, on_path, out);
  on_path.erase(g);
  placed.insert(g);
  out.push_back(g);
}

// The group whose setting applies for group `g`: its own, else the last parent (in listed
// order) that has one, recursively. `pick` reads the setting from a group.
template <class Pick>
std::pair<std::string, std::string> Nearest(const Cluster& c, const std::string& g, Pick pick,
                                            std::set<std::string>& on_path) {
  auto it = c.groups.find(g);
  if (it == c.groups.end() || on_path.count(g)) return {};
  if (!pick(it->second).empty()) return {pick(it->second), g};
  on_path.insert(g);
  std::pair<std::string, std::string> best;
  for (const auto& p : it->second.parents) {
    auto r = Nearest(c, p, pick, on_path);
    if (!r.first.empty()) best = r;
  }
  on_path.erase(g);
  return best;
}

template <class Pick>
std::pair<std::string, std::string> NearestForNode(const Cluster& c, const Node& n, Pick pick) {
  std::pair<std::string, std::string> best;
  for (const auto& g : n.groups) {
    std::set<std::string> on_path;
    auto r = Nearest(c, g, pick, on_path);
    if (!r.first.empty()) best = r;
  }
  return best;
}

}  // namespace

std::string JumpFor(const Cluster& cluster, const Node& node) {
  std::string jump = node.ssh_jump_own;
  if (jump.empty())
    jump = NearestForNode(cluster, node, [](const Group& g) -> const std::string& { return g.ssh_jump; }).first;
  if (jump.empty()) jump = cluster.ssh.jump;
  return jump == "none" ? std::string() : jump;
}

std::vector<std::string> MergeOrder(const Cluster& cluster, const Node& node) {
  std::vector<std::string> out;
  std::set<std::string> placed, on_path;
  for (const auto& g : node.groups) Visit(cluster, g, placed, on_path, out);
  return out;
}

void MergeInto(json& dst, OriginMap& dst_origins, std::map<std::string, std::string>& layers,
               const json& src, const OriginMap& src_origins, const std::string& layer,
               const std::string& pointer) {
  if (!src.is_object()) return;
  for (auto it = src.begin(); it != src.end(); ++it) {
    std::string child = PointerAppend(pointer, it.key());
    auto existing = dst.find(it.key());
    if (it.value().is_object() && existing != dst.end() && existing->is_object()) {
      MergeInto(*existing, dst_origins, layers, it.value(), src_origins, layer, child);
      continue;
    }
    dst[it.key()] = it.value();
    // The subtree is replaced: forget where the old leaves came from, take the new ones.
    for (auto o = dst_origins.begin(); o != dst_origins.end();) {
      o = PointerUnder(o->first, child) ? dst_origins.erase(o) : std::next(o);
    }
    for (auto l = layers.begin(); l != layers.end();) {
      l = PointerUnder(l->first, child) ? layers.erase(l) : std::next(l);
    }
    for (auto o = src_origins.lower_bound(child); o != src_origins.end(); ++o) {
      if (!PointerUnder(o->first, child)) {
        if (o->first.compare(0, child.size(), child) != 0) break;
        continue;
      }
      dst_origins[o->first] = o->second;
      layers[o->first] = layer;
    }
  }
}

NodeDesired ResolveNode(const Cluster& cluster, const Node& node) {
  NodeDesired nd;
  nd.node = node.name;
  nd.groups = MergeOrder(cluster, node);
  std::tie(nd.stack, nd.stack_from) =
      NearestForNode(cluster, node, [](const Group& g) -> const std::string& { return g.stack; });
  std::tie(nd.rollout, nd.rollout_from) =
      NearestForNode(cluster, node, [](const Group& g) -> const std::string& { return g.rollout; });
  if (auto it = cluster.stacks.find(nd.stack); it != cluster.stacks.end()) {
    MergeInto(nd.desired.Mut(), nd.origins.Mut(), nd.layers.Mut(), it->second.pins, it->second.origins,
              "stack " + nd.stack);
  }
  for (const auto& g : nd.groups) {
    const Group& group = cluster.groups.at(g);
    MergeInto(nd.desired.Mut(), nd.origins.Mut(), nd.layers.Mut(), group.overrides, group.override_origins,
              "group " + g);
  }
  return nd;
}

}  // namespace plumb::inventory
