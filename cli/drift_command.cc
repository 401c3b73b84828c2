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
  sub->footer(
      "Compares every pinned key of every node (in-band, and firmware/BIOS when BMC facts are\n"
      "present) with the repo at --ref. Each difference says repair (the node drifted since\n"
      "it was applied) or intent (the repo changed and was not applied yet). Waivers in\n"
      "waivers.yaml turn matching drift into 'waived' until they expire; an expired waiver\n"
      "counts as drift and warns.\n\n"
      "Precedence: error > drift > unreadable > in sync.\n\n"
      "Examples:\n"
      "  plumb drift --format junit --out drift.xml\n"
      "  plumb drift --format prom --out /var/lib/node_exporter/textfile/plumb.prom\n"
      "  plumb drift --format sarif --out drift.sarif      # code scanning, at the pin's line");
  return sub;
}

}  // namespace plumb::cli
