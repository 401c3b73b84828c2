// plumb gather: read every selected node's live state over SSH and print it.
// Its exit codes are the "gather" rows of schemas/exit_codes.cc.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/shared_options.h"
#include "cmd/bmc_factory.h"
#include "cmd/command.h"
#include "cmd/gather_support.h"
#include "cmd/repo_load.h"
#include "cmd/ssh_factory.h"
#include "modules/registry.h"
#include "plans/observe/node_progress.h"
#include "plans/report/gather_run.h"

namespace plumb::cmd {

namespace {

struct GatherArgs {
  plans::report::GatherRequest req;
  bool accept_new_host_keys = false;
  bool print_probe_script = false;
};

int RunGatherCommand(const GlobalOptions& g, const GatherArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  if (a.print_probe_script) {  // what one node runs; bench/gather feeds it to the peer tools
    std::fputs(ProbeScriptFor(modules::AllModules()).c_str(), stdout);
    return ExitCodeFor("gather", Outcome::kOk);
  }
  // Up to `fanout` threads allocate at once; glibc would give each its own arena (up to 8 per
  // core) and the fragmentation shows as RSS. Two arenas cost nothing measurable here.
  mallopt(M_ARENA_MAX, 2);
  plans::NodeProgressLine tty("gather", stderr);
  plans::report::GatherSources src;
  src.load = [&g] { return LoadRepo(g.repo, g.ref, g.working_tree); };
  src.repo = g.repo;
  src.ref = g.ref;
  src.modules = modules::AllModules();
  src.shells = [&](const inventory::Cluster& c) -> std::unique_ptr<plans::ShellFactory> {
    return MakeNodeShells(c.ssh, RepoRoot(g), a.accept_new_host_keys);
  };
  src.bmc = [&g](const inventory::Cluster& c, Diagnostics& notes) {
    return ClusterBmcOpener(RepoRoot(g), c, notes);
  };
  src.progress = ProgressOnStderr() ? &tty : nullptr;
  src.elapsed_s = [t0] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  plans::report::GatherRequest req = a.req;
  req.format = g.format;
  return plans::report::RunGather(req, src, std::cout, std::cerr);
}

}  // namespace

void RegisterGather(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static GatherArgs a;
  auto* sub = app.add_subcommand(
      "gather",
      "Read every node's live state (one SSH round trip per node) and print its facts");
  AddSourceOptions(*sub, g);
  cli::AddNodeLimit(*sub, a.req.limit, "Nodes to read");
  sub->add_option("--shard", a.req.shard,
                  "Read only part i of n of the selected nodes (1/4 .. 4/4; by name hash, "
                  "stable as nodes are added): n runners, then `plumb facts merge`");
  cli::AddFormat(*sub, g.format, "Output: text or json (the facts snapshot format)",
                 {"text", "json"});
  sub->add_option("--fanout", a.req.fanout, "Nodes probed at once (one SSH session each)")
      ->capture_default_str();
  cli::AddHostKeysFlag(*sub, a.accept_new_host_keys);
  sub->add_flag("--no-bmc", a.req.no_bmc,
                "Do not read BMCs over Redfish (the snapshot then has no firmware, bios or "
                "power facts: plan/drift --facts call those keys unread on nodes with a BMC)");
  sub->add_option("--facts-out", a.req.facts_out,
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
  sub->callback([&run, &g] { run = [&g] { return RunGatherCommand(g, a); }; });
}

}  // namespace plumb::cmd
