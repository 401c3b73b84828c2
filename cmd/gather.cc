// plumb gather: read every selected node's live state over SSH and print it.
// Its exit codes are the "gather" rows of schemas/exit_codes.cc.
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "cmd/command.h"
#include "cmd/bmc_factory.h"
#include "cmd/gather_support.h"
#include "modules/registry.h"
#include "plans/core/command_output.h"
#include "plans/observe/bmc_gather.h"
#include "plans/observe/gather.h"
#include "plans/plan/node_select.h"
#include "plans/plan/shard.h"
#include "cmd/ssh_factory.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kGatherVerb = "gather";
namespace {

struct GatherArgs {
  std::string limit;
  std::string shard;
  int fanout = 64;
  bool accept_new_host_keys = false;
  bool no_bmc = false;
  std::string facts_out;
  bool print_probe_script = false;
};

// The selected nodes (a shard of them with --shard) and the selection the snapshot records:
// shards merge only with the other shards of the same selection.
struct GatherTargets {
  std::vector<const inventory::Node*> nodes;
  std::string shard;
  size_t selection_nodes = 0;
  std::string selection_digest;
};

int SelectGatherTargets(const inventory::Cluster& cluster, const GatherArgs& a, GatherTargets& t) {
  auto nodes = plans::SelectNodes(cluster, a.limit);
  if (!nodes.ok()) {
    std::fprintf(stderr, "%s\n", nodes.error().ToString().c_str());
    return ExitCodeFor(kGatherVerb, Outcome::kError);
  }
  t.nodes = std::move(nodes.value());
  t.selection_digest = plans::SelectionDigest(t.nodes);
  t.selection_nodes = t.nodes.size();
  if (a.shard.empty()) return -1;
  auto shard = plans::ParseShard(a.shard);
  if (!shard.ok()) {
    std::fprintf(stderr, "%s\n", shard.error().ToString().c_str());
    return ExitCodeFor(kGatherVerb, Outcome::kRefused);
  }
  t.nodes = plans::NodesInShard(t.nodes, *shard);
  t.shard = shard->ToString();
  // Said on stderr so that a runner's log shows its part; an empty shard is not an error (a
  // small --limit split many ways), but it is said.
  std::fprintf(stderr, "shard %s: %zu of %zu selected node(s)\n", t.shard.c_str(), t.nodes.size(),
               t.selection_nodes);
  return -1;
}

// Every target over SSH, and their BMCs at the same time: the snapshot carries their firmware,
// BIOS and power facts too, so plan/drift --facts check those keys.
plans::ObservedState GatherTargetsOf(const GlobalOptions& g, const GatherArgs& a,
                                     const inventory::Cluster& cluster, const GatherTargets& t) {
  auto shells = MakeNodeShells(cluster.ssh, RepoRoot(g), a.accept_new_host_keys);
  // Up to `fanout` threads allocate at once; glibc would give each its own arena (up to 8 per
  // core) and the fragmentation shows as RSS. Two arenas cost nothing measurable here.
  mallopt(M_ARENA_MAX, 2);
  plans::GatherOptions opt;
  opt.fanout = a.fanout;
  opt.command_timeout = std::chrono::seconds(cluster.ssh.command_timeout_s);
  NodeProgressLine tty("gather");
  plans::OpenBmc open;
  if (!a.no_bmc && !plans::BmcTargetsOf(t.nodes).empty()) {
    Diagnostics bmc_diags;
    open = ClusterBmcOpener(RepoRoot(g), cluster, bmc_diags);
    std::fputs(bmc_diags.ToText().c_str(), stderr);
  }
  plans::ObservedState state = plans::GatherWithBmc(t.nodes, modules::AllModules(), *shells, opt,
                                                    ProgressOnStderr() ? &tty : nullptr, open);
  state.commit = cluster.source.commit;
  state.working_tree = cluster.source.working_tree;
  state.shard = t.shard;
  state.selection = a.limit;
  state.selection_nodes = t.selection_nodes;
  state.selection_digest = t.selection_digest;
  return state;
}

int RunGather(const GlobalOptions& g, const GatherArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  if (a.print_probe_script) {  // what one node runs; bench/gather feeds it to the peer tools
    std::fputs(ProbeScriptFor(modules::AllModules()).c_str(), stdout);
    return ExitCodeFor(kGatherVerb, Outcome::kOk);
  }
  Diagnostics diags;
  auto cluster = LoadClusterForGather(g, diags);
  std::fputs(diags.ToText().c_str(), stderr);
  if (!cluster.ok()) {
    std::fprintf(stderr, "%s\n", cluster.error().ToString().c_str());
    return ExitCodeFor(kGatherVerb, Outcome::kError);
  }
  GatherTargets t;
  if (int rc = SelectGatherTargets(*cluster, a, t); rc >= 0) return rc;
  if (a.fanout < 1) {
    std::fprintf(stderr, "error: --fanout must be at least 1\n");
    return ExitCodeFor(kGatherVerb, Outcome::kError);
  }
  plans::ObservedState state = GatherTargetsOf(g, a, *cluster, t);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a.facts_out.empty()) {
    if (Status st = plans::WriteObservedState(state, a.facts_out); !st.ok()) {
      std::fprintf(stderr, "%s\n", st.error().ToString().c_str());
      return ExitCodeFor(kGatherVerb, Outcome::kError);
    }
  }
  const bool partial = state.UnreachableCount() > 0 || state.ProbeErrorCount() > 0;
  plans::CommandOutcome o;
  o.render = [&](std::ostream& out) {
    if (g.format == "json") plans::WriteObservedStateJson(state, out, {{"summary", SummaryJson(state, wall)}});
    else out << RenderGatherText(state, wall);
  };
  o.exit_code = ExitCodeFor(kGatherVerb, partial ? Outcome::kPartial : Outcome::kOk);
  return plans::EmitOutcome(kGatherVerb, o, {"", g.format}, std::cout, std::cerr);
}

}  // namespace

void RegisterGather(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static GatherArgs a;
  auto* sub = app.add_subcommand(
      "gather",
      "Read every node's live state (one SSH round trip per node) and print its facts");
  AddSourceOptions(*sub, g);
  sub->add_option("--limit", a.limit,
                  "Nodes to read: globs, comma lists, @group, !exclusions (gpu00[1-4],@h100,!gpu003)");
  sub->add_option("--shard", a.shard,
                  "Read only part i of n of the selected nodes (1/4 .. 4/4; by name hash, "
                  "stable as nodes are added): n runners, then `plumb facts merge`");
  sub->add_option("--format", g.format, "Output: text or json (the facts snapshot format)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->add_option("--fanout", a.fanout, "Nodes probed at once (one SSH session each)")
      ->capture_default_str();
  sub->add_flag("--accept-new-host-keys", a.accept_new_host_keys,
                "Record host keys of nodes not yet in known_hosts (a changed key is always "
                "refused)");
  sub->add_flag("--no-bmc", a.no_bmc,
                "Do not read BMCs over Redfish (the snapshot then has no firmware, bios or "
                "power facts: plan/drift --facts call those keys unread on nodes with a BMC)");
  sub->add_option("--facts-out", a.facts_out,
                  "Also write the observed facts snapshot (JSON) to FILE");
  sub->add_flag("--print-probe-script", a.print_probe_script,
                "Print the probe script one node runs (fresh nonce) and exit; nothing is "
                "contacted");
  sub->footer(
      "Read-only: the only command sent to a node is the probe script (--print-probe-script);\n"
      "a node's BMC (inventory bmc:) is read over Redfish at the same time (GETs, in a session\n"
      "it deletes after).\n\n"
      "Examples:\n"
      "  plumb gather                                  every node: one line each, what it runs\n"
      "  plumb gather --limit 'gpu00[1-4],!gpu003'     three nodes\n"
      "  plumb gather --format json > facts.json       the facts snapshot, for plan --facts\n"
      "  plumb gather --facts-out facts.json           the table, and the snapshot kept\n"
      "  plumb gather --fanout 256 --limit @h100       a big pool, more sessions at once\n"
      "  plumb gather --shard 2/4 --facts-out s2.json  one runner's quarter of the fleet;\n"
      "  plumb facts merge s1.json s2.json s3.json s4.json > facts.json   the whole of it\n"
      "  plumb gather --print-probe-script | less      what runs on each node");
  sub->callback([&run, &g] { run = [&g] { return RunGather(g, a); }; });
}

}  // namespace plumb::cmd
