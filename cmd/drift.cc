// plumb drift: is every node where the repo says? Read-only, always: it gathers and compares,
// it never changes a node and never reads or touches the scheduler.
// Its exit codes are the "drift" rows of schemas/exit_codes.cc; precedence error > drift >
// unreadable > in sync (waived drift is in sync), never 2 for a no-op.
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cli/shared_options.h"
#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "plans/report/command_outcomes.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kDriftVerb = "drift";
namespace {

struct DriftArgs {
  ReadRunArgs read;
  std::string out;
};

int ShowDrift(const GlobalOptions& g, const DriftArgs& a, ReadRun& r) {
  const plans::report::DriftReport report = plans::report::DriftReportWithNotes(r);
  plans::report::RenderOptions ro;
  ro.tool_version = PLUMB_VERSION;
  ro.now_unix = static_cast<long long>(std::time(nullptr));
  const bool colour = a.out.empty() && ColorOn(g.color, stdout);
  auto style = plans::report::ReportStyle(colour);
  return plans::EmitOutcome(kDriftVerb,
                            plans::report::DriftCommandOutcome(report, g.format, ro, style),
                            {a.out, g.format}, std::cout, std::cerr);
}

int RunDriftCommand(const GlobalOptions& g, const DriftArgs& a) {
  ReadRunArgs read = a.read;
  read.read_scheduler = false;
  return ShowReadRun(kDriftVerb, g, read, [&](ReadRun& r) { return ShowDrift(g, a, r); });
}

}  // namespace

void RegisterDrift(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static DriftArgs a;
  auto* sub = app.add_subcommand(
      "drift", "Report, read-only, every node x key that differs from the repo (with waivers)");
  AddSourceOptions(*sub, g);
  AddReadRunOptions(*sub, a.read);
  cli::AddFormat(*sub, g.format, "text, json, junit, sarif, prom (textfile), html",
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
  sub->callback([&run, &g] { run = [&g] { return RunDriftCommand(g, a); }; });
}

}  // namespace plumb::cmd
