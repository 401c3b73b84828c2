// plumb history [NODE]: what ran where, when, from which commit, by whom, with what outcome,
// from the journal's step records (oldest first). --verify replays the journal's hash chain.
#include <cstdio>
#include <iostream>

#include "cli/journal_commands.h"
#include "cmd/command.h"
#include "plans/report/journal_commands.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kHistoryVerb = "history";

void RegisterHistory(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new cli::HistoryArgs;
  CLI::App* sub = cli::AddHistoryCommand(app, g, *a);
  sub->callback([&run, &g, a] {
    run = [&g, a] {
      if (auto conflict = cli::HistoryFlagConflict(*a)) {
        std::fprintf(stderr, "plumb history: %s\n", conflict->c_str());
        return ExitCodeFor(kHistoryVerb, Outcome::kError);
      }
      if (int rc = RefuseRetiredCountLimit(kHistoryVerb, a->old_limit); rc >= 0) return rc;
      plans::report::HistoryRequest req = a->req;
      req.format = g.format;
      return plans::report::RunHistory(req, std::cout, std::cerr);
    };
  });
}

}  // namespace plumb::cmd
