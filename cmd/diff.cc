// plumb diff REV1 REV2: how the desired state changes between two commits, per node and key.
// Reads only the cluster repo (no node, no scheduler). Exit 0 (with --detailed-exitcode: 0 no
// change, 2 changes), 1 error.
#include <cstdio>
#include <iostream>

#include "cli/repo_commands.h"
#include "cmd/color.h"
#include "cmd/command.h"
#include "cmd/repo_load.h"
#include "plans/report/command_outcomes.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kDiffVerb = "diff";
namespace {

using DiffArgs = cli::DiffArgs;

int RunDiffCommand(const GlobalOptions& g, const DiffArgs& a) {
  inventory::LoadedCluster before = LoadRepo(g.repo, a.from, false);
  inventory::LoadedCluster after = LoadRepo(g.repo, a.to, false);
  bool bad = false;
  for (const auto* lc : {&before, &after}) {
    if (lc->ok()) continue;
    std::fprintf(stderr, "%s at %s did not load:\n%s", g.repo.c_str(),
                 lc == &before ? a.from.c_str() : a.to.c_str(), lc->diags.ToText().c_str());
    bad = true;
  }
  if (bad) return ExitCodeFor(kDiffVerb, Outcome::kError);
  const bool colour = ColorOn(g.color, stdout);
  auto style = plans::report::ReportStyle(colour);
  return plans::EmitOutcome(
      kDiffVerb, plans::report::DiffCommandOutcome(before, after, g.format, a.detailed_exitcode, style),
      {"", g.format}, std::cout, std::cerr);
}

}  // namespace

void RegisterDiff(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static DiffArgs a;
  CLI::App* sub = cli::AddDiffCommand(app, g, a);
  sub->callback([&run, &g] { run = [&g] { return RunDiffCommand(g, a); }; });
}

}  // namespace plumb::cmd
