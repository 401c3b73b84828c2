#include "plans/report/desired_diff.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "plans/plan/keys.h"
#include "inventory/hostlist.h"
#include "plans/report/drift_render.h"

namespace plumb::plans::report {
namespace {

using nlohmann::json;

json At(const json& doc, const std::string& pointer) {
  try {
    json::json_pointer p(pointer);
    if (doc.contains(p)) return doc.at(p);
  } catch (const json::exception&) {
  }
  return nullptr;
}

std::vector<KeyChange> DiffNode(const inventory::NodeDesired* a, const inventory::NodeDesired* b) {
  static const json kEmpty = json::object();
  const json& da = a ? *a->desired : kEmpty;
  const json& db = b ? *b->desired : kEmpty;
  std::set<std::string> pointers;
  for (auto& p : LeafPointers(da)) pointers.insert(std::move(p));
  for (auto& p : LeafPointers(db)) pointers.insert(std::move(p));
  std::vector<KeyChange> out;
  for (const std::string& p : pointers) {
    json before = At(da, p), after = At(db, p);
    // A leaf on one side can be a map on the other ({} -> {x: 1}): the leaves below say it.
    if (before == after || (before.is_object() && !before.empty()) ||
        (after.is_object() && !after.empty()))
      continue;
    KeyChange c{schemas::PointerToKey(p), p, before, after, {}, KeyDisruption(p)};
    if (b && !after.is_null()) c.origin = b->OriginOf(p);
    else if (a) c.origin = a->OriginOf(p);
    out.push_back(std::move(c));
  }
  return out;
}

char Symbol(const KeyChange& c) {
  return c.before.is_null() ? '+' : c.after.is_null() ? '-' : '~';
}

std::string Line(const KeyChange& c) {
  std::string s = fmt::format("    {} {}: {} -> {}  ({})", Symbol(c), c.key, ShowValue(c.before),
                              ShowValue(c.after), modules::DisruptionName(c.disruption));
  if (c.origin.known()) s += "  " + c.origin.ToString();
  return s;
}

// Groups of nodes that change the same way, in first-seen (name) order.
std::vector<std::vector<const NodeDiff*>> Groups(const DesiredDiff& d) {
  std::map<std::string, size_t> index;
  std::vector<std::vector<const NodeDiff*>> out;
  for (const NodeDiff& n : d.nodes) {
    std::string sig = fmt::format("{}|{}|{}|{}|{}", NodeDiffKindName(n.kind), n.stack_before,
                                  n.stack_after, n.rollout_before, n.rollout_after);
    for (const KeyChange& c : n.changes) sig += "\n" + Line(c);
    auto [it, added] = index.emplace(sig, out.size());
    if (added) out.emplace_back();
    out[it->second].push_back(&n);
  }
  return out;
}

std::string GroupName(const std::vector<const NodeDiff*>& g) {
  std::vector<std::string> names;
  for (const NodeDiff* n : g) names.push_back(n->node);
  std::string s = inventory::CompressHostlist(names);
  return g.size() > 1 ? fmt::format("{} ({} nodes)", s, g.size()) : s;
}

std::string Hosts(const std::vector<std::string>& names) {
  std::string s = inventory::CompressHostlist(names);
  return names.size() > 1 ? fmt::format("{} ({} nodes)", s, names.size()) : s;
}

// The changed nodes by the most their changes can disturb, as plan's summary labels them.
std::vector<std::pair<std::string, std::vector<std::string>>> DesiredDisruptionRows(const DesiredDiff& d) {
  std::map<modules::Disruption, std::vector<std::string>> by;
  for (const NodeDiff& n : d.nodes)
    if (!n.changes.empty()) by[n.disruption].push_back(n.node);
  const std::pair<modules::Disruption, const char*> labels[] = {
      {modules::Disruption::kFirmwareFlash, "re-flash + reboot"},
      {modules::Disruption::kReboot, "drain + reboot"},
      {modules::Disruption::kDrain, "drain"},
      {modules::Disruption::kServiceRestart, "service restart"},
      {modules::Disruption::kNone, "live (no drain)"}};
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& [dis, label] : labels)
    if (by.count(dis)) out.emplace_back(label, by[dis]);
  return out;
}

std::string MdCell(const std::string& s) {
  std::string out = "`";
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '`') out += "'";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out + "`";
}

}  // namespace

const char* NodeDiffKindName(NodeDiff::Kind k) {
  switch (k) {
    case NodeDiff::Kind::kChanged: return "changed";
    case NodeDiff::Kind::kAdded: return "added";
    case NodeDiff::Kind::kRemoved: return "removed";
  }
  return "changed";
}

DesiredDiff DiffDesired(const DesiredByNode& before, const DesiredByNode& after) {
  DesiredDiff d;
  std::set<std::string> names;
  for (const auto& [n, _] : before) names.insert(n);
  for (const auto& [n, _] : after) names.insert(n);
  for (const std::string& name : names) {
    auto ia = before.find(name);
    auto ib = after.find(name);
    const inventory::NodeDesired* a = ia == before.end() ? nullptr : &ia->second;
    const inventory::NodeDesired* b = ib == after.end() ? nullptr : &ib->second;
    NodeDiff nd;
    nd.node = name;
    nd.kind = !a ? NodeDiff::Kind::kAdded : !b ? NodeDiff::Kind::kRemoved : NodeDiff::Kind::kChanged;
    if (a) nd.stack_before = a->stack, nd.rollout_before = a->rollout;
    if (b) nd.stack_after = b->stack, nd.rollout_after = b->rollout;
    nd.changes = DiffNode(a, b);
    for (const KeyChange& c : nd.changes) nd.disruption = std::max(nd.disruption, c.disruption);
    if (nd.kind == NodeDiff::Kind::kChanged && nd.changes.empty() &&
        nd.stack_before == nd.stack_after && nd.rollout_before == nd.rollout_after) {
      ++d.unchanged;
      continue;
    }
    d.nodes.push_back(std::move(nd));
  }
  return d;
}

std::string DesiredDiffToText(const DesiredDiff& d) {
  std::string out = fmt::format("plumb diff {} -> {}\n", d.from, d.to);
  for (const auto& g : Groups(d)) {
    const NodeDiff& n = *g.front();
    const char sym = n.kind == NodeDiff::Kind::kAdded ? '+' : n.kind == NodeDiff::Kind::kRemoved ? '-' : '~';
    out += fmt::format("\n{} {}{}{}\n", sym, GroupName(g),
                       n.kind == NodeDiff::Kind::kChanged ? "" : fmt::format(" ({} node)", NodeDiffKindName(n.kind)),
                       n.changes.empty() ? "" : fmt::format("  [{}]", modules::DisruptionName(n.disruption)));
    if (n.stack_before != n.stack_after)
      out += fmt::format("    stack: {} -> {}\n", n.stack_before.empty() ? "(none)" : n.stack_before,
                         n.stack_after.empty() ? "(none)" : n.stack_after);
    if (n.rollout_before != n.rollout_after)
      out += fmt::format("    rollout: {} -> {}\n", n.rollout_before.empty() ? "(none)" : n.rollout_before,
                         n.rollout_after.empty() ? "(none)" : n.rollout_after);
    for (const KeyChange& c : n.changes) out += Line(c) + "\n";
  }
  if (d.nodes.empty()) {
    out += "\nNo desired-state changes.\n";
    return out;
  }
  out += "\nDisruption (the most each change can take; the plan, which reads the nodes, may find less):\n";
  for (const auto& [label, names] : DesiredDisruptionRows(d))
    out += fmt::format("  {:<18} {}\n", label, Hosts(names));
  out += fmt::format("\n{} node(s) change, {} unchanged.\n", d.nodes.size(), d.unchanged);
  return out;
}

json DesiredDiffToJson(const DesiredDiff& d) {
  json nodes = json::array();
  for (const NodeDiff& n : d.nodes) {
    json changes = json::array();
    for (const KeyChange& c : n.changes) {
      json o = nullptr;
      if (c.origin.known()) o = {{"file", c.origin.file}, {"line", c.origin.line}, {"column", c.origin.column}};
      changes.push_back({{"key", c.key}, {"pointer", c.pointer}, {"before", c.before},
                         {"after", c.after}, {"origin", o},
                         {"disruption", modules::DisruptionName(c.disruption)}});
    }
    nodes.push_back({{"node", n.node}, {"kind", NodeDiffKindName(n.kind)},
                     {"stack", {{"before", n.stack_before}, {"after", n.stack_after}}},
                     {"rollout", {{"before", n.rollout_before}, {"after", n.rollout_after}}},
                     {"disruption", modules::DisruptionName(n.disruption)},
                     {"changes", std::move(changes)}});
  }
  return {{"from", d.from}, {"to", d.to}, {"cluster", d.cluster}, {"unchanged", d.unchanged},
          {"nodes", std::move(nodes)}};
}

std::string DesiredDiffToMarkdown(const DesiredDiff& d) {
  std::string out = fmt::format("### plumb diff {} → {}{}\n\n", MdCell(d.from), MdCell(d.to),
                                d.cluster.empty() ? "" : " (cluster " + MdCell(d.cluster) + ")");
  if (d.nodes.empty()) return out + "No desired-state changes.\n";
  int added = 0, removed = 0;
  for (const NodeDiff& n : d.nodes) {
    added += n.kind == NodeDiff::Kind::kAdded;
    removed += n.kind == NodeDiff::Kind::kRemoved;
  }
  out += fmt::format("**{} node(s) change** ({} added, {} removed), {} unchanged.\n",
                     d.nodes.size(), added, removed, d.unchanged);
  const auto rows = DesiredDisruptionRows(d);
  if (!rows.empty()) {
    out += "\n#### Disruption\n\nThe most each change can take (the plan, which reads the "
           "nodes, may find less).\n\n| disruption | nodes |\n|---|---|\n";
    for (const auto& [label, names] : rows)
      out += fmt::format("| {} | {} |\n", label, MdCell(Hosts(names)));
  }
  for (const auto& g : Groups(d)) {
    const NodeDiff& n = *g.front();
    out += fmt::format("\n#### {}{}{}\n\n", MdCell(GroupName(g)),
                       n.kind == NodeDiff::Kind::kChanged ? "" : fmt::format(" — {}", NodeDiffKindName(n.kind)),
                       n.changes.empty() ? "" : fmt::format(" [{}]", modules::DisruptionName(n.disruption)));
    if (n.stack_before != n.stack_after)
      out += fmt::format("Stack: {} → {}\n\n", MdCell(n.stack_before), MdCell(n.stack_after));
    if (n.rollout_before != n.rollout_after)
      out += fmt::format("Rollout: {} → {}\n\n", MdCell(n.rollout_before), MdCell(n.rollout_after));
    if (n.changes.empty()) continue;
    out += "| | key | before | after | disruption | pinned at |\n|---|---|---|---|---|---|\n";
    for (const KeyChange& c : n.changes)
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", Symbol(c), MdCell(c.key),
                         MdCell(ShowValue(c.before)), MdCell(ShowValue(c.after)),
                         modules::DisruptionName(c.disruption),
                         c.origin.known() ? MdCell(c.origin.ToString()) : "");
  }
  return out;
}

}  // namespace plumb::plans::report
