// plumb gather: read every selected node's live state over SSH and print it.
// Its exit codes are the "gather" rows of schemas/exit_codes.cc.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/gather_command.h"
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

using GatherArgs = cli::GatherArgs;

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
  CLI::App* sub = cli::AddGatherCommand(app, g, a);
  sub->callback([&run, &g] { run = [&g] { return RunGatherCommand(g, a); }; });
}

}  // namespace plumb::cmd
