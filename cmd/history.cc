// plumb history [NODE]: what ran where, when, from which commit, by whom, with what outcome,
// from the journal's step records (oldest first). --verify replays the journal's hash chain.
#include <cstdio>
#include <iostream>

#include "cli/command_line.h"
#include "cli/shared_options.h"
#include "cmd/command.h"
#include "plans/report/journal_commands.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kHistoryVerb = "history";
namespace {

struct HistoryArgs {
  plans::report::HistoryRequest req;
  std::string old_limit;   ///< --limit: refused with a pointer to --last
};

int HistoryFlagError(const char* message) {
  std::fprintf(stderr, "plumb history: %s\n", message);
  return ExitCodeFor(kHistoryVerb, Outcome::kError);
}

}  // namespace

void RegisterHistory(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new HistoryArgs;
  auto* sub = app.add_subcommand(
      "history", "What plumb applied where, when, from which commit, by whom; --verify checks "
                 "the journal's hash chain");
  sub->add_option("node", a->req.node, "Only this node (an error if no run touched it)");
  cli::AddStoreOption(*sub, a->req.store);
  sub->add_option("--last", a->req.last, "How many steps, the latest")->capture_default_str();
  // --limit takes node patterns everywhere else; here it used to count steps.
  cli::AddRetiredCountLimit(*sub, a->old_limit);
  sub->add_flag("--verify", a->req.verify,
                "Replay the hash chain: name every edited, deleted, inserted or reordered row "
                "(exit 1 if any)");
  sub->add_option("--anchor", a->req.anchor,
                  "With --verify: a head hash recorded earlier (plumb audit export's chain.head); "
                  "it must still be in the chain");
  cli::AddFormat(*sub, g.format, "text | json", {"text", "json"});
  sub->footer(
      "Every journal write is also appended to a hash chain (each entry holds the previous\n"
      "entry's hash). --verify replays it and compares each row with it. Someone who can\n"
      "write the journal can rewrite the whole chain; keep its head elsewhere (an audit\n"
      "export, the CI log) and check it with --anchor.\n\n"
      "Examples:\n"
      "  plumb history gpu001                        every step on gpu001, with who and which commit\n"
      "  plumb history --format json --last 1000\n"
      "  plumb history --verify                      exit 1 and the rows, if anything was edited\n"
      "  plumb history --verify --anchor sha256:...  and the head an export recorded is still there");
  sub->callback([&run, &g, a] {
    run = [&g, a] {
      if (!a->req.anchor.empty() && !a->req.verify)
        return HistoryFlagError("error: --anchor checks a chain head: give it with --verify");
      if (a->req.verify && !a->req.node.empty())
        return HistoryFlagError("error: --verify checks the whole journal; it takes no node");
      if (int rc = RefuseRetiredCountLimit(kHistoryVerb, a->old_limit); rc >= 0) return rc;
      plans::report::HistoryRequest req = a->req;
      req.format = g.format;
      return plans::report::RunHistory(req, std::cout, std::cerr);
    };
  });
}

}  // namespace plumb::cmd
