// plumb runs: the apply runs in the journal, newest first (text or JSON). Also lists the nodes
// the scheduler shows drained by plumb for a run the journal does not know (a lost journal),
// with --scheduler.
#include <iostream>

#include "cli/journal_commands.h"
#include "cmd/command.h"
#include "plans/report/journal_commands.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kRunsVerb = "runs";

void RegisterRuns(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new cli::RunsArgs;
  CLI::App* sub = cli::AddRunsCommand(app, g, *a);
  sub->callback([&run, &g, a] {
    run = [&g, a] {
      if (int rc = RefuseRetiredCountLimit(kRunsVerb, a->old_limit); rc >= 0) return rc;
      plans::report::RunsRequest req = a->req;
      req.format = g.format;
      return plans::report::RunRuns(req, std::cout, std::cerr);
    };
  });
}

}  // namespace plumb::cmd
