// plumb drift: is every node where the repo says? Read-only on the nodes, always: it gathers and
// compares and never changes a node. It reads and writes the scheduler only with --tag-stacks,
// and then only the stack tags (plans/report/stack_tags_run.h).
// Its exit codes are the "drift" rows of schemas/exit_codes.cc; precedence error > drift >
// unreadable > in sync (waived drift is in sync), never 2 for a no-op.
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cli/drift_command.h"
#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/apply_deps.h"
#include "cmd/read_run.h"
#include "modules/transport/local_shell.h"
#include "plans/report/command_outcomes.h"
#include "plans/report/stack_tags_run.h"
#include "schemas/exit_codes.h"

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

// --tag-stacks: the schedulers' stack tags from this read, through the CLIs apply drains with.
// An error (a scheduler that cannot be read) outranks the drift verdict.
int TagStacks(ReadRun& r, int verdict) {
  transport::LocalShell local(SchedulerEnv());
  const plans::Schedulers schedulers = plans::SchedulersFor(
      r.loaded.cluster, [&](inventory::DrainScheduler kind) { return MakeDrainer(kind, local); });
  const plans::report::StackTagsRun run = plans::report::TagStacksAfterRead(r, schedulers);
  std::cerr << plans::report::StackTagsText(run);
  return run.ok() ? verdict : ExitCodeFor(kDriftVerb, Outcome::kError);
}

int RunDriftCommand(const GlobalOptions& g, const DriftArgs& a) {
  // Tags say "this node runs that commit's stack": only a live read of every pin at a commit
  // can say so (a snapshot is old, uncommitted files are no commit, BMC pins need the BMCs).
  const char* refused = !a.read.run.facts.empty() ? "a recorded snapshot (--facts)"
                        : g.working_tree          ? "uncommitted files (--working-tree)"
                        : a.read.run.no_bmc       ? "a read without the BMCs (--no-bmc)"
                                                  : nullptr;
  if (a.tag_stacks && refused) {
    std::cerr << "plumb drift: --tag-stacks sets tags from a live read of every pin at a commit, "
                 "not from " << refused << "\n  hint: drop that flag, or drop --tag-stacks\n";
    return ExitCodeFor(kDriftVerb, Outcome::kError);
  }
  ReadRunArgs read = a.read;
  read.read_scheduler = false;
  return ShowReadRun(kDriftVerb, g, read, [&](ReadRun& r) {
    const int verdict = ShowDrift(g, a, r);
    return a.tag_stacks ? TagStacks(r, verdict) : verdict;
  });
}

}  // namespace

void RegisterDrift(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static DriftArgs a;
  CLI::App* sub = cli::AddDriftCommand(app, g, a);
  sub->callback([&run, &g] { run = [&g] { return RunDriftCommand(g, a); }; });
}

}  // namespace plumb::cmd
