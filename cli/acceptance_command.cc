#include "cli/acceptance_command.h"

namespace plumb::cli {

AcceptanceCommand AddAcceptanceCommand(CLI::App& app, GlobalOptions& g, AcceptanceArgs& a) {
  auto* sub = app.add_subcommand(
      "acceptance", "Burn-in acceptance: every health check at the burn-in level and every pin "
                    "verified, as a report (JSON with a digest, and HTML) in --out DIR");
  AddSourceOptions(*sub, g);
  AddReadRunOptions(*sub, a.read);
  sub->add_option("--out", a.out, "The report's directory (acceptance.json, acceptance.html, nodes/)");
  sub->add_option("--dcgm-level", a.dcgm_level,
                  "DCGM diagnostic level for nodes whose stack pins dcgm (3: ~30 min per node; 4: hours)")
      ->capture_default_str();
  sub->add_option("--timeout", a.timeout_s, "Seconds one node's health checks may take, all together")
      ->capture_default_str();
  sub->add_option("--health-fanout", a.health_fanout, "Nodes whose health checks run at once")
      ->capture_default_str();
  sub->add_option("--operator", a.operator_name, "Who runs the acceptance (default: $SUDO_USER or $USER)");
  sub->add_flag("--allow-busy", a.allow_busy,
                "Burn in nodes the scheduler shows running jobs too (without it their DCGM and NCCL "
                "checks are held, and they do not pass)");
  sub->add_flag("--fresh", a.fresh, "Run every node's checks again, even those kept in DIR/nodes/");
  sub->footer(
      "Read-only on the nodes: no drain; the scheduler is only read. The DCGM and NCCL checks\n"
      "load every GPU: on a node running jobs they are held (the node does not pass) unless\n"
      "--allow-busy. Run it before the cluster takes jobs. Interrupted, it resumes: a second\n"
      "run with the same --out, commit and level checks only the nodes that have not passed yet\n"
      "(kept in DIR/nodes/).\n\n"
      "Examples:\n"
      "  plumb acceptance --repo pod-a --ref v1.0 --out handover/\n"
      "  plumb acceptance --limit @h100 --dcgm-level 4 --out burnin/ --operator 'Jane Doe'\n"
      "  plumb acceptance verify handover/acceptance.json");
  auto* verify = sub->add_subcommand("verify", "Re-check an acceptance report's digest (exit 1 when it was changed)");
  verify->add_option("report", a.verify_path, "acceptance.json")->required();
  verify->footer("Examples:\n  plumb acceptance verify handover/acceptance.json");
  return {sub, verify};
}

}  // namespace plumb::cli
