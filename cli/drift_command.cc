#include "cli/drift_command.h"

#include "cli/shared_options.h"

namespace plumb::cli {

CLI::App* AddDriftCommand(CLI::App& app, GlobalOptions& g, DriftArgs& a) {
  auto* sub = app.add_subcommand(
      "drift", "Report, read-only, every node x key that differs from the repo (with waivers)");
  AddSourceOptions(*sub, g);
  AddReadRunOptions(*sub, a.read);
  AddFormat(*sub, g.format, "text, json, junit, sarif, prom (textfile), html",
            {"text", "json", "junit", "sarif", "prom", "html"});
  sub->add_option("--out", a.out, "Write the report to FILE (atomically) instead of stdout");
  sub->add_flag("--tag-stacks", a.tag_stacks,
                "Also make the schedulers' stack tags true: in-sync nodes show <stack>@<commit>, "
                "drifted ones none (writes Slurm features / Kubernetes labels, never a node)");
  sub->footer(
      "Compares every pinned key of every node (in-band, and firmware/BIOS when BMC facts are\n"
      "present) with the repo at --ref. Each difference says repair (the node drifted since\n"
      "it was applied) or intent (the repo changed and was not applied yet). Waivers in\n"
      "waivers.yaml turn matching drift into 'waived' until they expire; an expired waiver\n"
      "counts as drift and warns.\n\n"
      "Read-only on the nodes, always. Without --tag-stacks it does not touch the scheduler\n"
      "either. With it, the scheduler's stack tags (Slurm features stack_<name> and\n"
      "stack_commit_<12 hex>, Kubernetes labels plumb.dev/stack and plumb.dev/commit) are\n"
      "set from this read: an in-sync node shows its stack at --ref's commit, a node that\n"
      "drifted from its own commit shows none, nodes with only unapplied intent, unreadable\n"
      "nodes and nodes a plumb run holds are left as they are. Slurm forgets features set\n"
      "by scontrol when slurmctld restarts: run this after a restart (or from cron). Each\n"
      "tag written is listed on stderr; a scheduler that cannot be read is an error.\n\n"
      "Precedence: error > drift > unreadable > in sync.\n\n"
      "Examples:\n"
      "  plumb drift --format junit --out drift.xml\n"
      "  plumb drift --format prom --out /var/lib/node_exporter/textfile/plumb.prom\n"
      "  plumb drift --format sarif --out drift.sarif      # code scanning, at the pin's line\n"
      "  plumb drift --tag-stacks --out drift.json --format json   # after a slurmctld restart");
  return sub;
}

}  // namespace plumb::cli
