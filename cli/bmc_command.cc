#include "cli/bmc_command.h"

#include "cli/shared_options.h"

namespace plumb::cli {

namespace {

// The flags inventory, plan and reset share: where the targets come from, how the BMCs are
// reached, how long things may take.
void AddBmcOptions(CLI::App& sub, GlobalOptions& g, plans::BmcFlags& o) {
  AddSourceOptions(sub, g);
  sub.add_option("--targets", o.targets_file,
                 "File of \"NAME URL [system=ID]\" lines instead of the repo's nodes (system=: the "
                 "node's system on a BMC that manages several, like bmc_system)");
  sub.add_option("--limit,--node", o.nodes,
                 "Only these nodes: names, host lists (n[1-3,5]), globs (gpu*), !exclusions "
                 "(repeatable)");
  sub.add_option("--ca", o.ca, "CA bundle that signs the BMC certificates (overrides bmc.ca)");
  sub.add_option("--fingerprint", o.fingerprint, "Pinned SHA-256 certificate fingerprint (sha256:AB:CD:...)");
  sub.add_option("--credentials", o.credentials, "env:VAR or file:/path holding user:password");
  sub.add_option("--auth", o.auth, "auto | session | basic")->capture_default_str();
  sub.add_option("--fanout", o.fanout, "BMCs at once")->capture_default_str();
  sub.add_option("--per-bmc", o.per_bmc, "Connections per BMC")->capture_default_str();
  sub.add_option("--timeout", o.timeout_s, "Per-request timeout, seconds")->capture_default_str();
  sub.add_option("--task-timeout", o.task_timeout,
                 "How long a firmware update's task may run (45m, 90s, 1h)")->capture_default_str();
  sub.add_option("--power-timeout", o.power_timeout,
                 "How long a reset may take to reach its power state")->capture_default_str();
  AddFormat(sub, g.format, "text | json", {"text", "json"});
  sub.add_flag("-v,--verbose", g.verbose, "Print notes (retries, fallbacks, non-conformance)");
}

// The one door: bmc apply is `plumb apply` of a plan of the Redfish modules only, so its flags
// are apply's (with their help), less those that choose a plan or a run.
CLI::App* AddBmcApply(CLI::App& bmc, GlobalOptions& g, BmcApplyArgs& f, RuledOptions& ruled) {
  CLI::App* apply = bmc.add_subcommand(
      "apply",
      "Change firmware, BIOS and power as the repo says, through the engine: `plumb apply` of a "
      "plan of the Redfish modules only (lock, lease, drain, change, reset, verify, return to "
      "service, journaled; --resume as for plumb apply)");
  AddSourceOptions(*apply, g);
  apply->add_option("--limit,--node", f.limits,
                    "Only these nodes: names, host lists (n[1-3,5]), globs (gpu*), @group, "
                    "!exclusions (repeatable)");
  apply->add_flag("--auto-approve", f.a.auto_approve, "Apply without asking");
  AddApplyStoreFlag(*apply, f.a, ruled);
  AddApplyRecordFlags(*apply, f.a, ruled);
  AddApplyTimingFlags(*apply, g, f.a, ruled);
  apply->add_option("--targets", f.refused_targets, "(refused: a change needs the cluster repo)");
  apply->add_option("--desired", f.refused_desired, "(refused: a change applies the repo's commit)");
  return apply;
}

}  // namespace

BmcCommand AddBmcCommand(CLI::App& app, GlobalOptions& g, plans::BmcFlags& o, BmcApplyArgs& f) {
  BmcCommand c;
  c.bmc = app.add_subcommand("bmc", "Redfish BMCs: inventory, plan/apply firmware+BIOS+power, reset");
  c.bmc->require_subcommand(1);
  // Before the verbs are added: each verb takes its parent's footer as its own.
  c.bmc->footer(
      "Examples:\n"
      "  plumb bmc inventory                           firmware, BIOS, power of every node's BMC\n"
      "  plumb bmc inventory --limit 'gpu00[1-4]' --format json --out bmc.json\n"
      "  plumb bmc plan                                what firmware/bios/power would change\n"
      "  plumb bmc apply --limit gpu001                its firmware/BIOS through the engine (drained)\n"
      "  plumb bmc reset gpu001 --type force-off       power it off\n"
      "  plumb bmc inventory --targets bmcs.txt        BMCs listed in a file, no cluster repo");
  c.inventory = c.bmc->add_subcommand("inventory", "Firmware, BIOS and power facts from every BMC (exit 3 if some unreadable)");
  AddBmcOptions(*c.inventory, g, o);
  c.inventory->add_option("--out", o.out, "Also write the JSON inventory to this file");
  c.plan = c.bmc->add_subcommand("plan", "What firmware/bios/power would change (exit 2 if anything)");
  AddBmcOptions(*c.plan, g, o);
  c.plan->add_option("--desired", o.desired_file, "Desired state JSON for every target (instead of the repo's stacks)");
  c.apply = AddBmcApply(*c.bmc, g, f, c.apply_ruled);
  // The given shared flags reach apply's conflict rules (--reboot-grace without --resume is
  // refused), noted before the caller's callback runs.
  c.apply->parse_complete_callback([ruled = c.apply_ruled, &f] { NoteGiven(ruled, f.a.given); });
  c.reset = c.bmc->add_subcommand(
      "reset", "Reset one node through its BMC: only a node its scheduler shows out of service "
               "(drained or down) with no job; read right before the reset");
  AddBmcOptions(*c.reset, g, o);
  c.reset->add_option("node", o.reset_node, "Node name")->required();
  c.reset->add_option("--type", o.reset_type, "reboot | hard-reboot | on | off | force-off")->capture_default_str();
  return c;
}

}  // namespace plumb::cli
