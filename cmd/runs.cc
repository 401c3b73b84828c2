// plumb runs: the apply runs in the journal, newest first (text or JSON). Also lists the nodes
// the scheduler shows drained by plumb for a run the journal does not know (a lost journal),
// with --scheduler.
#include <iostream>

#include "cli/command_line.h"
#include "cli/shared_options.h"
#include "cmd/command.h"
#include "plans/report/journal_commands.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kRunsVerb = "runs";
namespace {

struct RunsArgs {
  plans::report::RunsRequest req;
  std::string old_limit;   ///< --limit: refused with a pointer to --last
};

}  // namespace

void RegisterRuns(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new RunsArgs;
  auto* sub = app.add_subcommand(
      "runs", "List apply runs from the journal, with who ran and approved them (or one run's "
              "nodes)");
  sub->add_option("run", a->req.run, "Show this run's nodes");
  cli::AddStoreOption(*sub, a->req.store);
  sub->add_option("--last", a->req.last, "How many runs, the latest first")->capture_default_str();
  // --limit takes node patterns everywhere else; here it used to count runs.
  cli::AddRetiredCountLimit(*sub, a->old_limit);
  cli::AddFormat(*sub, g.format, "text | json", {"text", "json"});
  sub->footer(
      "Each run records its operator (OS user), the CI job and who triggered it (GitHub Actions,\n"
      "GitLab CI), the approver (apply --approved-by or $PLUMB_APPROVED_BY), and the commit's\n"
      "author, committer and verified signer.\n\n"
      "Examples:\n"
      "  plumb runs                       the latest runs: commit, when, by whom, outcome\n"
      "  plumb runs 20261130-220000-4f2a  one run: who, and where each node stands\n"
      "  plumb runs --format json --last 100");
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
