#include "inventory/checks.h"


#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "inventory/node_pattern.h"
#include "schemas/json_pointer.h"
#include "schemas/suggest.h"

namespace plumb::inventory {

using schemas::Marks;
using schemas::PointerAppend;

namespace {

std::string UnknownHint(const std::string& word, const std::vector<std::string>& known,
                        const std::string& otherwise) {
  std::string best = schemas::DidYouMean(word, known);
  if (!best.empty()) return fmt::format("did you mean '{}'?", best);
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return list.empty() ? otherwise : fmt::format("{} (known: {})", otherwise, list);
}

// A BMC serves one node, or several that each name their own system on it (bmc_system: an HPE
// Cray EX blade's BMC manages Node0 and Node1). `seen` maps "url" and "url#system" to the node
// that took them.
void CheckSharedBmc(const Node& n, const std::string& ptr, const LoadedDocs& docs,
                    std::map<std::string, const Node*>& seen, Diagnostics& diags) {
  auto at = [&](const char* field) {
    std::string p = PointerAppend(ptr, field);
    return std::make_pair(docs.inventory->marks.At(p), schemas::KeyPath(p, docs.inventory->json));
  };
  if (n.bmc.empty()) {
    if (!n.bmc_system.empty()) {
      auto [where, key] = at("bmc_system");
      diags.Add(Diagnostic::Error("inventory.bmc-system-without-bmc",
                                  "bmc_system without bmc: there is no BMC to find the system on",
                                  where, key, "set bmc: to the BMC's https:// URL, or remove bmc_system"));
    }
    return;
  }
  const std::string system_key = n.bmc + "#" + n.bmc_system;
  auto same = seen.find(system_key);
  if (same != seen.end()) {
    auto [where, key] = at(n.bmc_system.empty() ? "bmc" : "bmc_system");
    diags.Add(Diagnostic::Error(
        n.bmc_system.empty() ? "inventory.duplicate-bmc" : "inventory.duplicate-bmc-system",
        n.bmc_system.empty()
            ? fmt::format("duplicate BMC endpoint '{}'", schemas::Printable(n.bmc))
            : fmt::format("duplicate system '{}' on BMC '{}'", n.bmc_system, schemas::Printable(n.bmc)),
        where, key,
        n.bmc_system.empty()
            ? fmt::format("node '{}' at line {} already has it; nodes that share one BMC (a blade "
                          "with several systems) each name their own with bmc_system",
                          same->second->name, same->second->where.line)
            : fmt::format("node '{}' at line {} already is that system; each node needs its own",
                          same->second->name, same->second->where.line)));
    return;
  }
  // One node naming no system and another naming one on the same BMC: the first one's system
  // would be ambiguous (or be the other node's).
  auto bare = seen.find(n.bmc + "#");
  auto any_named = std::find_if(seen.begin(), seen.end(), [&](const auto& kv) {
    return kv.first.size() > n.bmc.size() + 1 && kv.first.compare(0, n.bmc.size() + 1, n.bmc + "#") == 0;
  });
  const Node* other = n.bmc_system.empty() ? (any_named != seen.end() ? any_named->second : nullptr)
                                           : (bare != seen.end() ? bare->second : nullptr);
  if (other) {
    auto [where, key] = at("bmc");
    const Node* unnamed = n.bmc_system.empty() ? &n : other;
    diags.Add(Diagnostic::Error(
        "inventory.shared-bmc-without-system",
        fmt::format("BMC '{}' is shared with node '{}' (line {}), and node '{}' names no bmc_system",
                    schemas::Printable(n.bmc), other->name, other->where.line, unnamed->name),
        where, key, "nodes that share one BMC each name their own system on it, e.g. bmc_system: Node1"));
  }
  seen.emplace(system_key, &n);
}

}  // namespace

// Duplicate names, addresses and BMC endpoints; groups a node names that do not exist.
void CheckNodes(const Cluster& c, const LoadedDocs& docs, Diagnostics& diags) {
  std::map<std::string, const Node*> names, addresses, bmcs;
  std::vector<std::string> group_names;
  for (const auto& [g, _] : c.groups) group_names.push_back(g);
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    const Node& n = c.nodes[i];
    const std::string& ptr = docs.node_pointers[i];
    auto dup = [&](std::map<std::string, const Node*>& seen, const std::string& value,
                   const char* field, const char* what) {
      if (value.empty()) return;
      auto [it, fresh] = seen.emplace(value, &n);
      if (fresh) return;
      std::string p = PointerAppend(ptr, field);
      diags.Add(Diagnostic::Error(
          fmt::format("inventory.duplicate-{}", field),
          fmt::format("duplicate {} '{}'", what, schemas::Printable(value)),
          docs.inventory->marks.At(p), schemas::KeyPath(p, docs.inventory->json),
          fmt::format("node '{}' at line {} already has it; each node needs its own",
                      it->second->name, it->second->where.line)));
    };
    dup(names, n.name, "name", "node name");
    dup(addresses, n.address, "address", "node address");
    CheckSharedBmc(n, ptr, docs, bmcs, diags);
    for (size_t k = 0; k < n.groups.size(); ++k) {
      if (c.groups.count(n.groups[k])) continue;
      std::string p = PointerAppend(PointerAppend(ptr, "groups"), k);
      diags.Add(Diagnostic::Error(
          "inventory.unknown-group", fmt::format("unknown group '{}'", n.groups[k]),
          docs.inventory->marks.At(p), schemas::KeyPath(p, docs.inventory->json),
          UnknownHint(n.groups[k], group_names, "define it under groups:")));
    }
  }
}

// Unknown parents, stacks and rollouts; cycles in parents (each reported once, as a path).
void CheckGroups(const Cluster& c, const LoadedDocs& docs, Diagnostics& diags) {
  std::vector<std::string> group_names, stack_names, rollout_names;
  for (const auto& [g, _] : c.groups) group_names.push_back(g);
  for (const auto& [s, _] : c.stacks) stack_names.push_back(s);
  for (const auto& [r, _] : c.rollouts) rollout_names.push_back(r);
  for (const auto& [name, g] : c.groups) {
    std::string ptr = PointerAppend("/groups", name);
    for (size_t k = 0; k < g.parents.size(); ++k) {
      if (c.groups.count(g.parents[k])) continue;
      std::string p = PointerAppend(PointerAppend(ptr, "parents"), k);
      diags.Add(Diagnostic::Error(
          "inventory.unknown-group", fmt::format("unknown parent group '{}'", g.parents[k]),
          docs.inventory->marks.At(p), schemas::KeyPath(p, docs.inventory->json),
          UnknownHint(g.parents[k], group_names, "define it under groups:")));
    }
    if (!g.stack.empty() && !c.stacks.count(g.stack)) {
      std::string p = PointerAppend(ptr, "stack");
      diags.Add(Diagnostic::Error(
          "inventory.unknown-stack", fmt::format("unknown stack '{}'", g.stack),
          docs.inventory->marks.At(p), schemas::KeyPath(p, docs.inventory->json),
          UnknownHint(g.stack, stack_names,
                      fmt::format("there is no stacks/{}.yaml", g.stack))));
    }
    if (!g.rollout.empty() && !c.rollouts.count(g.rollout)) {
      std::string p = PointerAppend(ptr, "rollout");
      diags.Add(Diagnostic::Error(
          "inventory.unknown-rollout", fmt::format("unknown rollout policy '{}'", g.rollout),
          docs.inventory->marks.At(p), schemas::KeyPath(p, docs.inventory->json),
          UnknownHint(g.rollout, rollout_names,
                      fmt::format("there is no rollouts/{}.yaml", g.rollout))));
    }
  }
  // Cycles: depth-first search with colours; each cycle is reported at its first group.
  std::map<std::string, int> colour;  // 0 new, 1 on the path, 2 done
  std::vector<std::string> path;
  std::set<std::string> reported;
  std::function<void(const std::string&)> dfs = [&](const std::string& g) {
    colour[g] = 1;
    path.push_back(g);
    for (const auto& p : c.groups.at(g).parents) {
      if (!c.groups.count(p)) continue;
      if (colour[p] == 1) {
        auto start = std::find(path.begin(), path.end(), p);
        std::vector<std::string> cyc(start, path.end());
        std::vector<std::string> canon = cyc;
        std::sort(canon.begin(), canon.end());
        std::string key;
        for (const auto& c : canon) key += c + ",";
        if (!reported.insert(key).second) continue;
        std::string shown;
        for (const auto& c : cyc) shown += c + " -> ";
        shown += p;
        std::string at = PointerAppend("/groups", cyc.back());
        diags.Add(Diagnostic::Error(
            "inventory.group-cycle", fmt::format("groups inherit in a cycle: {}", shown),
            docs.inventory->marks.KeyAt(PointerAppend(at, "parents")),
            schemas::KeyPath(PointerAppend(at, "parents"), docs.inventory->json),
            "a group cannot be its own ancestor; remove one of these parents"));
      } else if (colour[p] == 0) {
        dfs(p);
      }
    }
    path.pop_back();
    colour[g] = 2;
  };
  for (const auto& [g, _] : c.groups) {
    if (colour[g] == 0) dfs(g);
  }
}

// failure_domain.by must name something the nodes carry.
void CheckRollouts(const Cluster& c, const LoadedDocs& docs, Diagnostics& diags) {
  for (const auto& [name, r] : c.rollouts) {
    if (r.domain_by.empty()) continue;
    size_t missing = 0;
    std::string example;
    for (const auto& n : c.nodes) {
      if (n.Domain(r.domain_by).empty()) {
        if (missing++ == 0) example = n.name;
      }
    }
    if (missing == 0) continue;
    const Marks& marks = docs.rollouts.at(name);
    std::string p = "/failure_domain/by";
    bool known = r.domain_by == "rack" || r.domain_by == "leaf" || r.domain_by == "nvlink_domain";
    if (missing == c.nodes.size() && !known) {
      diags.Add(Diagnostic::Error(
          "rollout.unknown-domain",
          fmt::format("failure domain '{}' is not rack, leaf, nvlink_domain or a label any node has",
                      r.domain_by),
          marks.At(p), "failure_domain.by",
          schemas::SuggestHint(r.domain_by, {"rack", "leaf", "nvlink_domain"})));
    } else {
      diags.Add(Diagnostic::Warning(
          "rollout.domain-missing",
          fmt::format("{} of {} nodes have no '{}' (e.g. {}); each counts as its own domain",
                      missing, c.nodes.size(), r.domain_by, example),
          marks.At(p), "failure_domain.by", "set it on every node in inventory.yaml"));
    }
  }
}

// Waivers: a real calendar date; expired ones warn (they no longer excuse anything); a glob
// that matches no node warns (probably a typo).
void CheckWaivers(const Cluster& c, Diagnostics& diags) {
  using namespace std::chrono;
  const year_month_day today{floor<days>(system_clock::now())};
  for (const auto& w : c.waivers) {
    const Location expires_at = w.expires_at.known() ? w.expires_at : w.where;
    const Location nodes_at = w.nodes_at.known() ? w.nodes_at : w.where;
    const std::string expires_key = fmt::format("waivers[{}].expires", w.index);
    bool shaped = w.expires.size() == 10 && w.expires[4] == '-' && w.expires[7] == '-' &&
                  std::all_of(w.expires.begin(), w.expires.end(),
                              [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '-'; });
    if (shaped) {  // else the schema already said what is wrong
      year_month_day exp{year{std::stoi(w.expires.substr(0, 4))},
                         month{static_cast<unsigned>(std::stoi(w.expires.substr(5, 2)))},
                         day{static_cast<unsigned>(std::stoi(w.expires.substr(8, 2)))}};
      if (!exp.ok()) {
        diags.Add(Diagnostic::Error("waivers.bad-date",
                                      fmt::format("'{}' is not a calendar date", w.expires),
                                      expires_at, expires_key, "write YYYY-MM-DD, e.g. 2026-12-31"));
      } else if (sys_days{exp} < sys_days{today}) {
        diags.Add(Diagnostic::Warning(
            "waivers.expired",
            fmt::format("waiver for '{}' on '{}' expired on {}", w.nodes, w.keys, w.expires),
            expires_at, expires_key, "renew it with a new date and reason, or remove it"));
      }
    }
    if (w.nodes.empty()) continue;
    bool any = false;
    const NodePattern pattern(w.nodes);
    for (const auto& n : c.nodes) any = any || pattern.Matches(n.name);
    if (!any) {
      diags.Add(Diagnostic::Warning(
          "waivers.no-match", fmt::format("waiver for '{}' matches no node", w.nodes), nodes_at,
          fmt::format("waivers[{}].nodes", w.index),
          "check the pattern (host list n[1-3,5] or glob gpu*) against the node names in inventory.yaml"));
    }
  }
}

namespace {

// Leaves of a desired-state document (scalars, lists, empty maps) as JSON pointers.
void Leaves(const nlohmann::json& j, const std::string& at, std::vector<std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      Leaves(it.value(), schemas::PointerAppend(at, it.key()), out);
    return;
  }
  out.push_back(at);
}

Location NearestOrigin(const OriginMap& origins, std::string p) {
  while (!p.empty()) {
    if (auto it = origins.find(p); it != origins.end()) return it->second;
    p.resize(p.rfind('/'));
  }
  return {};
}

}  // namespace

void CheckPinnedKeys(const Cluster& c, const std::function<bool(std::string_view)>& is_checked,
                     Diagnostics& diags) {
  std::set<std::string> said;   // one error per key and place, however many groups share it
  auto check = [&](const nlohmann::json& doc, const OriginMap& origins) {
    std::vector<std::string> leaves;
    Leaves(doc, "", leaves);
    for (const std::string& p : leaves) {
      if (p.empty() || is_checked(p)) continue;
      const Location at = NearestOrigin(origins, p);
      if (!said.insert(at.ToString() + p).second) continue;
      diags.Add(Diagnostic::Error(
          "inventory.unchecked-key",
          fmt::format("'{}' is pinned, but no module of this plumb checks it: it would never be "
                      "compared or changed", schemas::PointerToKey(p)),
          at, schemas::PointerToKey(p), "remove it; `plumb modules` lists the keys plumb checks"));
    }
  };
  for (const auto& [name, s] : c.stacks) check(s.pins, s.origins);
  for (const auto& [name, g] : c.groups) check(g.overrides, g.override_origins);
}

}  // namespace plumb::inventory
