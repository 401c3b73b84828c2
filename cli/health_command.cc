#include "cli/health_command.h"

#include "cli/shared_options.h"

namespace plumb::cli {

CLI::App* AddHealthCommand(CLI::App& app, GlobalOptions& g, HealthArgs& a) {
  auto* sub = app.add_subcommand(
      "health", "Run the health checks the stacks pin (DCGM, NCCL bandwidth, GPU and fabric "
                "errors) on each node and report each against its threshold (read-only)");
  AddSourceOptions(*sub, g);
  AddNodeLimit(*sub, a.req.limit, "Nodes to check");
  AddFormat(*sub, g.format, "text, json, junit, prom (textfile)",
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
  AddHostKeysFlag(*sub, a.accept_new_host_keys);
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
  return sub;
}

}  // namespace plumb::cli
