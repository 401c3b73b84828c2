// plumb show NODE: one node's merged desired state, each value with the file:line it came from.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "cmd/command.h"
#include "cmd/repo_load.h"
#include "inventory/load.h"
#include "schemas/json_pointer.h"
#include "schemas/suggest.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kShowVerb = "show";

namespace {

struct ShowOptions {
  std::string node;
};

std::string Value(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

int RunShow(const GlobalOptions& g, const ShowOptions& o) {
  inventory::LoadedCluster lc = LoadRepo(g.repo, g.ref, g.working_tree);
  if (!lc.ok()) {
    std::fputs(lc.diags.ToText().c_str(), stderr);
    std::fprintf(stderr, "plumb show: %s\n", RepoLoadFailure(lc, g.repo, g.ref, g.working_tree).ToString().c_str());
    return ExitCodeFor(kShowVerb, Outcome::kError);
  }
  const auto& c = lc.cluster;
  const inventory::Node* node = c.FindNode(o.node);
  auto it = lc.desired.find(o.node);
  if (node == nullptr || it == lc.desired.end()) {
    std::vector<std::string> names;
    for (const auto& n : c.nodes) names.push_back(n.name);
    std::string best = schemas::DidYouMean(o.node, names);
    std::fprintf(stderr, "plumb: error: no node '%s' in cluster %s\n",
                 schemas::Printable(o.node).c_str(), c.name.c_str());
    if (!best.empty()) std::fprintf(stderr, "  hint: did you mean '%s'?\n", best.c_str());
    return ExitCodeFor(kShowVerb, Outcome::kError);
  }
  const inventory::NodeDesired& nd = it->second;
  const auto* stack = c.stacks.count(nd.stack) ? &c.stacks.at(nd.stack) : nullptr;
  const auto* rollout = c.rollouts.count(nd.rollout) ? &c.rollouts.at(nd.rollout) : nullptr;

  // Leaves sorted by key: a flat "key  value  origin  (layer)" list, easy to grep and diff.
  struct Row { std::string key, value, origin, layer, pointer; };
  std::vector<Row> rows;
  for (const auto& [ptr, where] : *nd.origins) {
    const nlohmann::json* v = schemas::ValueAt(nd.desired, ptr);
    if (v == nullptr) continue;
    auto layer = nd.layers->find(ptr);
    rows.push_back({schemas::KeyPath(ptr, nd.desired), Value(*v), where.ToString(),
                    layer == nd.layers->end() ? "" : layer->second, ptr});
  }

  if (g.format == "json") {
    nlohmann::json origins = nlohmann::json::object();
    for (const auto& r : rows) {
      const auto& w = nd.origins->at(r.pointer);
      origins[r.pointer] = {{"file", w.file}, {"line", w.line}, {"column", w.column},
                            {"layer", r.layer}};
    }
    nlohmann::json labels = node->labels;
    nlohmann::json out = {
        {"node", node->name}, {"address", node->address}, {"bmc", node->bmc},
        {"bmc_system", node->bmc_system},
        {"rack", node->rack}, {"leaf", node->leaf}, {"nvlink_domain", node->nvlink_domain},
        {"labels", labels},
        {"defined_at", node->where.ToString()},
        {"groups", node->groups}, {"merge_order", nd.groups},
        {"stack", {{"name", nd.stack}, {"from_group", nd.stack_from},
                   {"file", stack ? stack->file : ""}}},
        {"rollout", {{"name", nd.rollout}, {"from_group", nd.rollout_from},
                     {"file", rollout ? rollout->file : ""}}},
        {"commit", c.source.commit}, {"ref", c.source.ref},
        {"working_tree", c.source.working_tree},
        {"desired", nd.desired}, {"origins", origins},
    };
    std::printf("%s\n", out.dump(2).c_str());
    return ExitCodeFor(kShowVerb, Outcome::kOk);
  }
  if (c.source.working_tree) std::fputs(lc.diags.ToText().c_str(), stderr);
  std::string order;
  for (const auto& gname : nd.groups) order += (order.empty() ? "" : " -> ") + gname;
  std::string at = c.source.working_tree
                       ? std::string("in the working tree (uncommitted files)")
                       : fmt::format("at {} (ref {})", c.source.commit.substr(0, 12), c.source.ref);
  std::printf("node %s (%s) in cluster %s %s\n", node->name.c_str(), node->address.c_str(),
              c.name.c_str(), at.c_str());
  std::printf("  defined at  %s\n", node->where.ToString().c_str());
  if (!node->bmc.empty()) {
    std::printf("  bmc         %s%s\n", node->bmc.c_str(),
                node->bmc_system.empty() ? "" : (" (system " + node->bmc_system + ")").c_str());
  }
  std::printf("  domains     rack=%s leaf=%s nvlink_domain=%s\n",
              node->rack.empty() ? "-" : node->rack.c_str(),
              node->leaf.empty() ? "-" : node->leaf.c_str(),
              node->nvlink_domain.empty() ? "-" : node->nvlink_domain.c_str());
  std::printf("  merge order %s  (later wins)\n", order.c_str());
  std::printf("  stack       %s  (from group %s, %s)\n", nd.stack.c_str(), nd.stack_from.c_str(),
              stack ? stack->file.c_str() : "?");
  if (!nd.rollout.empty()) {
    std::printf("  rollout     %s  (from group %s, %s)\n", nd.rollout.c_str(),
                nd.rollout_from.c_str(), rollout ? rollout->file.c_str() : "?");
  }
  std::printf("\ndesired state (precedence: stack < group overrides, parents before children):\n");
  size_t kw = 0, vw = 0;
  for (const auto& r : rows) {
    kw = std::max(kw, r.key.size());
    vw = std::max(vw, r.value.size());
  }
  for (const auto& r : rows) {
    std::printf("  %-*s  %-*s  %s  (%s)\n", static_cast<int>(kw), r.key.c_str(),
                static_cast<int>(vw), r.value.c_str(), r.origin.c_str(), r.layer.c_str());
  }
  return ExitCodeFor(kShowVerb, Outcome::kOk);
}

}  // namespace

void RegisterShow(CLI::App& app, GlobalOptions& global, std::function<int()>& run) {
  static ShowOptions opts;
  auto* sub = app.add_subcommand(
      "show", "Print one node's merged desired state with the file:line every value came from");
  sub->add_option("node", opts.node, "Node name, as in inventory.yaml")->required();
  AddSourceOptions(*sub, global);
  sub->add_option("--format", global.format, "Output: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->footer(
      "The stack comes from the nearest group that names one; group overrides then apply,\n"
      "parents before children, the node's groups in listed order (later wins). Mappings merge,\n"
      "scalars and lists replace.\n\n"
      "Examples:\n"
      "  plumb show gpu001                       # at HEAD of the repo in .\n"
      "  plumb show gpu001 --ref upgrade         # what a tag or branch would set\n"
      "  plumb show gpu001 --format json | jq '.origins[\"/nvidia/driver\"]'");
  sub->callback([&run, &global] { run = [&global] { return RunShow(global, opts); }; });
}

}  // namespace plumb::cmd
