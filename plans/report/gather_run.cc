// `plumb gather` over its sources (plans/report/gather_run.h).
#include "plans/report/gather_run.h"

#include <chrono>

#include <fmt/format.h>

#include "plans/core/command_output.h"
#include "plans/plan/node_select.h"
#include "plans/plan/shard.h"
#include "plans/report/gather_text.h"
#include "schemas/exit_codes.h"

namespace plumb::plans::report {

namespace {

constexpr std::string_view kGatherRunVerb = "gather";

bool ConcernsDesiredOnly(const Diagnostic& d) {
  return d.code == "inventory.no-stack" || d.code == "inventory.no-rollout" ||
         d.code.rfind("coherence.", 0) == 0 || d.where.file.rfind("stacks/", 0) == 0 ||
         d.where.file.rfind("rollouts/", 0) == 0 || d.where.file == "waivers.yaml";
}

// Every target over SSH, and their BMCs at the same time: the snapshot carries their firmware,
// BIOS and power facts too, so plan/drift --facts check those keys.
ObservedState GatherTargetsOf(const GatherRequest& req, const GatherSources& src,
                              const inventory::Cluster& cluster, const GatherTargets& t,
                              std::ostream& err) {
  std::unique_ptr<ShellFactory> shells = src.shells(cluster);
  GatherOptions opt;
  opt.fanout = req.fanout;
  opt.command_timeout = std::chrono::seconds(cluster.ssh.command_timeout_s);
  OpenBmc open;
  if (!req.no_bmc && src.bmc && !BmcTargetsOf(t.nodes).empty()) {
    Diagnostics bmc_diags;
    open = src.bmc(cluster, bmc_diags);
    err << bmc_diags.ToText();
  }
  ObservedState state = GatherWithBmc(t.nodes, src.modules, *shells, opt, src.progress, open);
  state.commit = cluster.source.commit;
  state.working_tree = cluster.source.working_tree;
  state.shard = t.shard;
  state.selection = req.limit;
  state.selection_nodes = t.selection_nodes;
  state.selection_digest = t.selection_digest;
  return state;
}

}  // namespace

Result<inventory::Cluster> ClusterToGather(inventory::LoadedCluster loaded, const std::string& repo,
                                           const std::string& ref, Diagnostics& diags) {
  bool fatal = false;
  for (Diagnostic d : loaded.diags.items()) {
    if (d.severity == Severity::kError) {
      if (ConcernsDesiredOnly(d)) d.severity = Severity::kWarning;
      else fatal = true;
    }
    diags.Add(std::move(d));
  }
  if (fatal || loaded.cluster.nodes.empty()) {
    return Diagnostic::Error("gather.inventory",
                             fmt::format("the cluster repo {} at {} has errors (above), or no "
                                         "nodes; gather needs a valid inventory",
                                         repo, ref),
                             {}, {}, "run `plumb validate` for the full report");
  }
  return std::move(loaded.cluster);
}

Result<GatherTargets> SelectGatherTargets(const inventory::Cluster& cluster, const std::string& limit,
                                          const std::string& shard, bool* refused) {
  *refused = false;
  auto nodes = SelectNodes(cluster, limit);
  if (!nodes.ok()) return nodes.error();
  GatherTargets t;
  t.nodes = std::move(nodes.value());
  t.selection_digest = SelectionDigest(t.nodes);
  t.selection_nodes = t.nodes.size();
  if (shard.empty()) return t;
  auto part = ParseShard(shard);
  if (!part.ok()) {
    *refused = true;
    return part.error();
  }
  t.nodes = NodesInShard(t.nodes, *part);
  t.shard = part->ToString();
  return t;
}

int RunGather(const GatherRequest& req, const GatherSources& src, std::ostream& out,
              std::ostream& err) {
  Diagnostics diags;
  auto cluster = ClusterToGather(src.load(), src.repo, src.ref, diags);
  err << diags.ToText();
  if (!cluster.ok()) {
    err << cluster.error().ToString() << "\n";
    return ExitCodeFor(kGatherRunVerb, Outcome::kError);
  }
  bool refused = false;
  auto t = SelectGatherTargets(*cluster, req.limit, req.shard, &refused);
  if (!t.ok()) {
    err << t.error().ToString() << "\n";
    return ExitCodeFor(kGatherRunVerb, refused ? Outcome::kRefused : Outcome::kError);
  }
  // Said on stderr so that a runner's log shows its part; an empty shard is not an error (a
  // small --limit split many ways), but it is said.
  if (!t->shard.empty())
    err << fmt::format("shard {}: {} of {} selected node(s)\n", t->shard, t->nodes.size(),
                       t->selection_nodes);
  if (req.fanout < 1) {
    err << "error: --fanout must be at least 1\n";
    return ExitCodeFor(kGatherRunVerb, Outcome::kError);
  }
  ObservedState state = GatherTargetsOf(req, src, *cluster, *t, err);
  const double wall = src.elapsed_s ? src.elapsed_s() : 0.0;
  if (!req.facts_out.empty()) {
    if (Status st = WriteObservedState(state, req.facts_out); !st.ok()) {
      err << st.error().ToString() << "\n";
      return ExitCodeFor(kGatherRunVerb, Outcome::kError);
    }
  }
  const bool partial = state.UnreachableCount() > 0 || state.ProbeErrorCount() > 0;
  CommandOutcome o;
  o.render = [&](std::ostream& os) {
    if (req.format == "json") WriteObservedStateJson(state, os, {{"summary", GatherSummaryJson(state, wall)}});
    else os << GatherText(state, wall);
  };
  o.exit_code = ExitCodeFor(kGatherRunVerb, partial ? Outcome::kPartial : Outcome::kOk);
  return EmitOutcome(kGatherRunVerb, o, {"", req.format}, out, err);
}

}  // namespace plumb::plans::report
