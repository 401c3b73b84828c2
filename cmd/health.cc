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

#include "cli/shared_options.h"
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

struct HealthArgs {
  plans::report::HealthCommandRequest req;
  bool accept_new_host_keys = false;
};

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
  auto* sub = app.add_subcommand(
      "health", "Run the health checks the stacks pin (DCGM, NCCL bandwidth, GPU and fabric "
                "errors) on each node and report each against its threshold (read-only)");
  AddSourceOptions(*sub, g);
  cli::AddNodeLimit(*sub, a.req.limit, "Nodes to check");
  cli::AddFormat(*sub, g.format, "text, json, junit, prom (textfile)",
                 {"text", "json", "junit", "prom"});
  sub->add_option("--out", a.req.file, "Write the report to FILE (atomically) instead of stdout");
  sub->add_option("--fanout", a.req.fanout, "Nodes checked at once (one SSH session each)")
      ->capture_default_str();
  sub->add_option("--timeout", a.req.timeout_s,
                  "Seconds one node's checks may take, all together (a DCGM level 3 diagnostic "
                  "takes ~30 minutes)")
      ->capture_default_str();
  sub->add_flag("--allow-busy", a.req.allow_busy,
                "Run the checks that load every GPU (dcgm, nccl_bw) on nodes running jobs too "
                "(without it they are skipped there, and when the scheduler cannot be read)");
  cli::AddHostKeysFlag(*sub, a.accept_new_host_keys);
  sub->footer(
      "What runs is what each node's stack pins under `health:` (stacks/<name>.yaml):\n"
      "  health:\n"
      "    dcgm: { level: 2 }                      # dcgmi diag -r 2, per test and GPU\n"
      "    nccl_bw: { min_busbw_gbps: 350 }        # all_reduce_perf on all the node's GPUs\n"
      "    gpu_health: { max_uncorrected_ecc: 0 }  # ECC, row remapping, XIDs, throttling\n"
      "    ib_health: { max_counters: {} }         # port error counters (perfquery), all 0\n"
      "A node that pins none is listed and not contacted. The DCGM and NCCL checks load every\n"
      "GPU: they are skipped (SKIP, with the jobs named) on a node the scheduler shows running\n"
      "jobs, or when it cannot be read, unless --allow-busy. apply runs them itself, drained,\n"
      "after a change.\n\n"
      "Examples:\n"
      "  plumb health --limit @h100\n"
      "  plumb health --format junit --out health.xml\n"
      "  plumb health --format prom --out /var/lib/node_exporter/textfile/plumb_health.prom");
  sub->callback([&run, &g] { run = [&g] { return RunHealth(g, a); }; });
}

}  // namespace plumb::cmd
