// plumb health: run the health checks each selected node's stack pins (`health:` - DCGM
// diagnostics, NCCL bus bandwidth, GPU memory and XID errors, fabric error counters) and report
// every check with what it measured against the threshold. Read-only: the checks load the GPUs
// and the fabric for their duration and change nothing (no drain; the scheduler is only read,
// so the checks that load every GPU are held on a node running jobs unless --allow-busy).
// Its exit codes are the "health" rows of schemas/exit_codes.cc.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/apply_deps.h"
#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/gather_support.h"
#include "cmd/read_run.h"
#include "cmd/repo_load.h"
#include "cmd/ssh_factory.h"
#include "modules/registry.h"
#include "modules/transport/local_shell.h"
#include "plans/core/command_output.h"
#include "plans/plan/node_select.h"
#include "plans/report/command_outcomes.h"
#include "plans/report/health_report.h"
#include "plans/rollout/health_run.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kHealthVerb = "health";
namespace {

struct HealthArgs {
  std::string limit;
  int fanout = 16;
  int timeout_s = 3600;
  bool accept_new_host_keys = false;
  bool allow_busy = false;
  std::string out;
};

// A line per node on a terminal; in a log, one line per node that did not pass.
plans::HealthProgress HealthProgressOnStderr() {
  return [tty = isatty(2) != 0](const plans::NodeHealth& h, size_t done, size_t total) {
    if (tty) {
      std::fprintf(stderr, "\rhealth: %zu/%zu nodes", done, total);
      if (done == total) std::fprintf(stderr, "\r\033[K");
    } else if (h.Verdict() == modules::CheckStatus::kFail) {
      std::fprintf(stderr, "health: %s failed (%zu/%zu)\n", h.node.c_str(), done, total);
    }
    std::fflush(stderr);
  };
}

int RunHealthCommand(const GlobalOptions& g, const HealthArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  if (a.fanout < 1 || a.timeout_s < 1) {
    std::fprintf(stderr, "error: --fanout and --timeout must be at least 1\n");
    return ExitCodeFor(kHealthVerb, Outcome::kRefused);
  }
  inventory::LoadedCluster loaded = LoadRepo(g.repo, g.ref, g.working_tree);
  std::fputs(loaded.diags.ToText().c_str(), stderr);
  if (!loaded.ok()) {
    std::fprintf(stderr, "plumb health: %s\n",
                 RepoLoadFailure(loaded, g.repo, g.ref, g.working_tree).ToString().c_str());
    return ExitCodeFor(kHealthVerb, Outcome::kError);
  }
  const inventory::Cluster& cluster = loaded.cluster;
  auto nodes = plans::SelectNodes(cluster, a.limit);
  if (!nodes.ok()) {
    std::fprintf(stderr, "%s\n", nodes.error().ToString().c_str());
    return ExitCodeFor(kHealthVerb, Outcome::kRefused);
  }
  // Read-only: what the schedulers say now, so the checks that load every GPU never run under
  // a job (nothing is drained or claimed).
  transport::LocalShell local(SchedulerEnv());
  const plans::SchedulerView view =
      a.allow_busy ? plans::SchedulerView{} : plans::ReadSchedulers(RealSchedulers(cluster, local));
  plans::report::HealthCheckRequest req{&cluster, &loaded.desired, *nodes,
                                        a.allow_busy ? nullptr : &view, modules::AllModules(),
                                        a.fanout, std::chrono::seconds(a.timeout_s),
                                        HealthProgressOnStderr()};
  auto shells = MakeNodeShells(cluster.ssh, RepoRoot(g), a.accept_new_host_keys);
  plans::report::HealthReport report = plans::report::CheckHealth(req, *shells);
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool colour = a.out.empty() && ColorOn(g.color, stdout);
  auto style = [colour](std::string text) { return ColorizeReport(text, colour); };
  return plans::EmitOutcome(
      kHealthVerb,
      plans::report::HealthCommandOutcome(report, g.format, std::time(nullptr), style),
      {a.out, g.format}, std::cout, std::cerr);
}

}  // namespace

void RegisterHealth(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static HealthArgs a;
  auto* sub = app.add_subcommand(
      "health", "Run the health checks the stacks pin (DCGM, NCCL bandwidth, GPU and fabric "
                "errors) on each node and report each against its threshold (read-only)");
  AddSourceOptions(*sub, g);
  sub->add_option("--limit", a.limit,
                  "Nodes to check: globs, comma lists, @group, !exclusions (gpu00[1-4],@h100,!gpu003)");
  sub->add_option("--format", g.format, "text, json, junit, prom (textfile)")
      ->check(CLI::IsMember({"text", "json", "junit", "prom"}))
      ->capture_default_str();
  sub->add_option("--out", a.out, "Write the report to FILE (atomically) instead of stdout");
  sub->add_option("--fanout", a.fanout, "Nodes checked at once (one SSH session each)")
      ->capture_default_str();
  sub->add_option("--timeout", a.timeout_s,
                  "Seconds one node's checks may take, all together (a DCGM level 3 diagnostic "
                  "takes ~30 minutes)")
      ->capture_default_str();
  sub->add_flag("--allow-busy", a.allow_busy,
                "Run the checks that load every GPU (dcgm, nccl_bw) on nodes running jobs too "
                "(without it they are skipped there, and when the scheduler cannot be read)");
  sub->add_flag("--accept-new-host-keys", a.accept_new_host_keys,
                "Record host keys of nodes not yet in known_hosts (a changed key is always refused)");
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
  sub->callback([&run, &g] { run = [&g] { return RunHealthCommand(g, a); }; });
}

}  // namespace plumb::cmd
