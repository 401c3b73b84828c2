#include "plans/report/node_show.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "plans/core/command_output.h"
#include "schemas/exit_codes.h"
#include "schemas/json_pointer.h"
#include "schemas/suggest.h"

namespace plumb::plans::report {
namespace {

struct ShowRow { std::string key, value, origin, layer, pointer; };

std::vector<ShowRow> ShowRows(const inventory::NodeDesired& nd) {
  std::vector<ShowRow> rows;
  for (const auto& [ptr, where] : *nd.origins) {
    const nlohmann::json* v = schemas::ValueAt(nd.desired, ptr);
    if (v == nullptr) continue;
    auto layer = nd.layers->find(ptr);
    rows.push_back({schemas::KeyPath(ptr, nd.desired), v->is_string() ? v->get<std::string>() : v->dump(),
                    where.ToString(), layer == nd.layers->end() ? "" : layer->second, ptr});
  }
  return rows;
}

std::string ShowHeader(const inventory::Cluster& c, const inventory::Node& node,
                       const inventory::NodeDesired& nd) {
  const auto* stack = c.stacks.count(nd.stack) ? &c.stacks.at(nd.stack) : nullptr;
  const auto* rollout = c.rollouts.count(nd.rollout) ? &c.rollouts.at(nd.rollout) : nullptr;
  std::string order;
  for (const auto& gname : nd.groups) order += (order.empty() ? "" : " -> ") + gname;
  std::string at = c.source.working_tree
                       ? std::string("in the working tree (uncommitted files)")
                       : fmt::format("at {} (ref {})", c.source.commit.substr(0, 12), c.source.ref);
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  std::string out = fmt::format("node {} ({}) in cluster {} {}\n", node.name, node.address, c.name, at);
  out += fmt::format("  defined at  {}\n", node.where.ToString());
  if (!node.bmc.empty())
    out += fmt::format("  bmc         {}{}\n", node.bmc,
                       node.bmc_system.empty() ? "" : " (system " + node.bmc_system + ")");
  out += fmt::format("  domains     rack={} leaf={} nvlink_domain={}\n", dash(node.rack),
                     dash(node.leaf), dash(node.nvlink_domain));
  out += fmt::format("  merge order {}  (later wins)\n", order);
  out += fmt::format("  stack       {}  (from group {}, {})\n", nd.stack, nd.stack_from,
                     stack ? stack->file : "?");
  if (!nd.rollout.empty())
    out += fmt::format("  rollout     {}  (from group {}, {})\n", nd.rollout, nd.rollout_from,
                       rollout ? rollout->file : "?");
  return out;
}

}  // namespace

std::string NodeShowText(const inventory::Cluster& c, const inventory::Node& node,
                         const inventory::NodeDesired& nd) {
  std::string out = ShowHeader(c, node, nd);
  out += "\ndesired state (precedence: stack < group overrides, parents before children):\n";
  const std::vector<ShowRow> rows = ShowRows(nd);
  size_t kw = 0, vw = 0;
  for (const auto& r : rows) {
    kw = std::max(kw, r.key.size());
    vw = std::max(vw, r.value.size());
  }
  for (const auto& r : rows)
    out += fmt::format("  {:<{}}  {:<{}}  {}  ({})\n", r.key, kw, r.value, vw, r.origin, r.layer);
  return out;
}

nlohmann::json NodeShowJson(const inventory::Cluster& c, const inventory::Node& node,
                            const inventory::NodeDesired& nd) {
  const auto* stack = c.stacks.count(nd.stack) ? &c.stacks.at(nd.stack) : nullptr;
  const auto* rollout = c.rollouts.count(nd.rollout) ? &c.rollouts.at(nd.rollout) : nullptr;
  nlohmann::json origins = nlohmann::json::object();
  for (const auto& r : ShowRows(nd)) {
    const auto& w = nd.origins->at(r.pointer);
    origins[r.pointer] = {{"file", w.file}, {"line", w.line}, {"column", w.column}, {"layer", r.layer}};
  }
  nlohmann::json labels = node.labels;
  return {
      {"node", node.name}, {"address", node.address}, {"bmc", node.bmc},
      {"bmc_system", node.bmc_system},
      {"rack", node.rack}, {"leaf", node.leaf}, {"nvlink_domain", node.nvlink_domain},
      {"labels", labels},
      {"defined_at", node.where.ToString()},
      {"groups", node.groups}, {"merge_order", nd.groups},
      {"stack", {{"name", nd.stack}, {"from_group", nd.stack_from}, {"file", stack ? stack->file : ""}}},
      {"rollout", {{"name", nd.rollout}, {"from_group", nd.rollout_from},
                   {"file", rollout ? rollout->file : ""}}},
      {"commit", c.source.commit}, {"ref", c.source.ref},
      {"working_tree", c.source.working_tree},
      {"desired", nd.desired}, {"origins", origins},
  };
}

int ShowNode(const inventory::LoadedCluster& lc, const std::string& node, const std::string& format,
             std::ostream& out, std::ostream& err) {
  const inventory::Cluster& c = lc.cluster;
  const inventory::Node* n = c.FindNode(node);
  auto it = lc.desired.find(node);
  if (n == nullptr || it == lc.desired.end()) {
    std::vector<std::string> names;
    for (const auto& each : c.nodes) names.push_back(each.name);
    const std::string best = schemas::DidYouMean(node, names);
    err << fmt::format("plumb: error: no node '{}' in cluster {}\n", schemas::Printable(node), c.name);
    if (!best.empty()) err << fmt::format("  hint: did you mean '{}'?\n", best);
    return ExitCodeFor("show", Outcome::kError);
  }
  if (format != "json" && c.source.working_tree) err << lc.diags.ToText();
  CommandOutcome o;
  o.render = [&](std::ostream& os) {
    if (format == "json") os << NodeShowJson(c, *n, it->second).dump(2) << "\n";
    else os << NodeShowText(c, *n, it->second);
  };
  o.exit_code = ExitCodeFor("show", Outcome::kOk);
  return EmitOutcome("show", o, {"", format}, out, err);
}

}  // namespace plumb::plans::report
