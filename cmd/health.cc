// plumb health: run the health checks each selected node's stack pins (`health:` - DCGM
// diagnostics, NCCL bus bandwidth, GPU memory and XID errors, fabric error counters) and report
// every check with what it measured against the threshold. Read-only: the checks load the GPUs
// and the fabric for their duration and change nothing (no drain; the scheduler is only read,
// so the checks that load every GPU are held on a node running jobs unless --allow-busy).
// Its exit codes are the "health" rows of schemas/exit_codes.cc.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cli/health_command.h"
#include "cmd/apply_deps.h"
#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/gather_support.h"
#include "cmd/repo_load.h"
#include "cmd/ssh_factory.h"
#include "modules/registry.h"
#include "modules/transport/local_shell.h"
#include "plans/report/health_command.h"

namespace plumb::cmd {

namespace {

using HealthArgs = cli::HealthArgs;

int RunHealth(const GlobalOptions& g, const HealthArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  transport::LocalShell local(SchedulerEnv());
  plans::report::HealthSources src;
  src.load = [&g] { return LoadRepo(g.repo, g.ref, g.working_tree); };
  src.load_failure = [&g](const inventory::LoadedCluster& lc) {
    return RepoLoadFailure(lc, g.repo, g.ref, g.working_tree);
  };
  src.schedulers = [&local](const inventory::Cluster& c) {
    return plans::ReadSchedulers(RealSchedulers(c, local));
  };
  src.shells = [&](const inventory::Cluster& c) -> std::unique_ptr<plans::ShellFactory> {
    return MakeNodeShells(c.ssh, RepoRoot(g), a.accept_new_host_keys);
  };
  src.modules = modules::AllModules();
  src.progress = plans::report::HealthProgressTo(stderr, isatty(2) != 0);
  const bool colour = a.req.file.empty() && ColorOn(g.color, stdout);
  src.style = plans::report::ReportStyle(colour);
  src.elapsed_s = [t0] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  src.now_unix = [] { return static_cast<long long>(std::time(nullptr)); };
  plans::report::HealthCommandRequest req = a.req;
  req.format = g.format;
  return plans::report::RunHealthCommand(req, src, std::cout, std::cerr);
}

}  // namespace

void RegisterHealth(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static HealthArgs a;
  CLI::App* sub = cli::AddHealthCommand(app, g, a);
  sub->callback([&run, &g] { run = [&g] { return RunHealth(g, a); }; });
}

}  // namespace plumb::cmd
