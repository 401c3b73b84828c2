#include "plans/node_select.h"

#include <fnmatch.h>

#include <set>
#include <string>

#include <fmt/format.h>

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

bool Matches(const inventory::Cluster& c, const inventory::Node& n, const std::string& term) {
  if (!term.empty() && term[0] == '@') return InGroup(c, n, term.substr(1));
  return fnmatch(term.c_str(), n.name.c_str(), 0) == 0;
}

}  // namespace

Result<std::vector<const inventory::Node*>> SelectNodes(const inventory::Cluster& cluster,
                                                        std::string_view pattern) {
  std::vector<std::string> include, exclude;
  std::string p(pattern);
  size_t start = 0;
  while (start <= p.size()) {
    size_t comma = p.find(',', start);
    std::string term = p.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!term.empty() && term.front() == ' ') term.erase(0, 1);
    while (!term.empty() && term.back() == ' ') term.pop_back();
    if (!term.empty()) (term[0] == '!' ? exclude : include).push_back(term[0] == '!' ? term.substr(1) : term);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (const auto* terms : {&include, &exclude}) {
    for (const auto& t : *terms) {
      if (t.size() > 1 && t[0] == '@' && !cluster.groups.count(t.substr(1))) {
        bool used = false;  // a group named only in nodes' lists is still a group
        for (const auto& n : cluster.nodes) used = used || InGroup(cluster, n, t.substr(1));
        if (!used) {
          return Diagnostic::Error("limit.no-match", fmt::format("--limit: no group '{}'", t.substr(1)),
                                   {}, {}, "groups are defined in inventory.yaml under groups:");
        }
      }
      bool any = false;
      for (const auto& n : cluster.nodes) any = any || Matches(cluster, n, t);
      if (!any) {
        return Diagnostic::Error("limit.no-match",
                                 fmt::format("--limit: '{}' matches no node", t), {}, {},
                                 "terms are node-name globs (gpu00[1-4]) or @group, comma-separated");
      }
    }
  }
  std::vector<const inventory::Node*> out;
  for (const auto& n : cluster.nodes) {
    bool in = include.empty();
    for (const auto& t : include) in = in || Matches(cluster, n, t);
    for (const auto& t : exclude) in = in && !Matches(cluster, n, t);
    if (in) out.push_back(&n);
  }
  return out;
}

}  // namespace plumb::plans
