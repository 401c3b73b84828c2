#include "plans/plan/node_select.h"

#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "inventory/node_pattern.h"
#include "schemas/suggest.h"

namespace plumb::plans {
namespace {

// Is `node` in `group`, directly or because one of its groups has `group` as an ancestor?
bool InGroup(const inventory::Cluster& c, const inventory::Node& node, const std::string& group) {
  std::vector<std::string> todo(node.groups.begin(), node.groups.end());
  std::set<std::string> seen;
  while (!todo.empty()) {
    std::string g = todo.back();
    todo.pop_back();
    if (g == group) return true;
    if (!seen.insert(g).second) continue;  // cycles are the validator's to report
    if (auto it = c.groups.find(g); it != c.groups.end()) {
      todo.insert(todo.end(), it->second.parents.begin(), it->second.parents.end());
    }
  }
  return false;
}

}  // namespace

std::optional<Diagnostic> LimitNamesNoNode(std::string_view pattern) {
  const std::string why = inventory::WhyNoNodeTerm(pattern);
  if (why.empty()) return std::nullopt;
  return Diagnostic::Error(
      "limit.empty",
      fmt::format("--limit '{}' names no node: {}", schemas::Printable(std::string(pattern)), why),
      {}, {},
      "leave --limit out to mean every node; a script passing --limit \"$NODES\" should stop "
      "when it is empty: --limit \"${NODES:?no nodes}\"");
}

Result<std::vector<const inventory::Node*>> SelectNodes(const inventory::Cluster& cluster,
                                                        std::string_view pattern) {
  if (!pattern.empty())
    if (auto none = LimitNamesNoNode(pattern)) return *none;
  const inventory::NodePattern p(pattern);
  std::map<std::string_view, const inventory::Node*> by_name;
  for (const auto& n : cluster.nodes) by_name.emplace(n.name, &n);
  const inventory::NodePattern::GroupTest in_group = [&](std::string_view node,
                                                         std::string_view group) {
    auto it = by_name.find(node);
    return it != by_name.end() && InGroup(cluster, *it->second, std::string(group));
  };
  for (const auto& t : p.terms()) {
    const std::string shown = (t.exclude ? "!" : "") + t.text;
    if (t.group && !cluster.groups.count(t.text.substr(1))) {
      bool used = false;  // a group named only in nodes' lists is still a group
      for (const auto& n : cluster.nodes) used = used || InGroup(cluster, n, t.text.substr(1));
      if (!used)
        return Diagnostic::Error("limit.no-match",
                                 fmt::format("--limit: no group '{}'", t.text.substr(1)), {}, {},
                                 "groups are defined in inventory.yaml under groups:");
    }
    bool any = false;
    for (const auto& n : cluster.nodes)
      if (inventory::NodePattern::TermMatches(t, n.name, in_group)) {
        any = true;
        break;
      }
    if (!any)
      return Diagnostic::Error("limit.no-match", fmt::format("--limit: '{}' matches no node", shown),
                               {}, {},
                               "terms are node names, host lists (n[1-3,5]), globs (gpu*) or "
                               "@group, comma-separated; !term excludes");
  }
  std::vector<const inventory::Node*> out;
  for (const auto& n : cluster.nodes)
    if (p.empty() || p.Matches(n.name, in_group)) out.push_back(&n);
  return out;
}

}  // namespace plumb::plans
