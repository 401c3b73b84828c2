// plumb drift: is every node where the repo says? Read-only, always: it gathers and compares,
// it never changes a node and never reads or touches the scheduler.
// Its exit codes are the "drift" rows of schemas/exit_codes.cc; precedence error > drift >
// unreadable > in sync (waived drift is in sync), never 2 for a no-op.
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cli/drift_command.h"
#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "plans/report/command_outcomes.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kDriftVerb = "drift";
namespace {

using DriftArgs = cli::DriftArgs;

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
  CLI::App* sub = cli::AddDriftCommand(app, g, a);
  sub->callback([&run, &g] { run = [&g] { return RunDriftCommand(g, a); }; });
}

}  // namespace plumb::cmd
