#include "cli/journal_commands.h"

#include "cli/command_line.h"
#include "cli/shared_options.h"

namespace plumb::cli {

CLI::App* AddRunsCommand(CLI::App& app, GlobalOptions& g, RunsArgs& a) {
  auto* sub = app.add_subcommand(
      "runs", "List apply runs from the journal, with who ran and approved them (or one run's "
              "nodes)");
  sub->add_option("run", a.req.run, "Show this run's nodes");
  AddStoreOption(*sub, a.req.store);
  sub->add_option("--last", a.req.last, "How many runs, the latest first")->capture_default_str();
  // --limit takes node patterns everywhere else; here it used to count runs.
  AddRetiredCountLimit(*sub, a.old_limit);
  AddFormat(*sub, g.format, "text | json", {"text", "json"});
  sub->footer(
      "Each run records its operator (OS user), the CI job and who triggered it (GitHub Actions,\n"
      "GitLab CI), the approver (apply --approved-by or $PLUMB_APPROVED_BY), and the commit's\n"
      "author, committer and verified signer.\n\n"
      "Examples:\n"
      "  plumb runs                       the latest runs: commit, when, by whom, outcome\n"
      "  plumb runs 20261130-220000-4f2a  one run: who, and where each node stands\n"
      "  plumb runs --format json --last 100");
  return sub;
}

CLI::App* AddHistoryCommand(CLI::App& app, GlobalOptions& g, HistoryArgs& a) {
  auto* sub = app.add_subcommand(
      "history", "What plumb applied where, when, from which commit, by whom; --verify checks "
                 "the journal's hash chain");
  sub->add_option("node", a.req.node, "Only this node (an error if no run touched it)");
  AddStoreOption(*sub, a.req.store);
  sub->add_option("--last", a.req.last, "How many steps, the latest")->capture_default_str();
  // --limit takes node patterns everywhere else; here it used to count steps.
  AddRetiredCountLimit(*sub, a.old_limit);
  sub->add_flag("--verify", a.req.verify,
                "Replay the hash chain: name every edited, deleted, inserted or reordered row "
                "(exit 1 if any)");
  sub->add_option("--anchor", a.req.anchor,
                  "With --verify: a head hash recorded earlier (plumb audit export's chain.head); "
                  "it must still be in the chain");
  AddFormat(*sub, g.format, "text | json", {"text", "json"});
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
  return sub;
}

std::optional<std::string> HistoryFlagConflict(const HistoryArgs& a) {
  if (!a.req.anchor.empty() && !a.req.verify)
    return "error: --anchor checks a chain head: give it with --verify";
  if (a.req.verify && !a.req.node.empty())
    return "error: --verify checks the whole journal; it takes no node";
  return std::nullopt;
}

CLI::App* AddAuditCommand(CLI::App& app, plans::report::AuditRequest& a) {
  auto* audit = app.add_subcommand("audit", "Evidence for an auditor, from the journal");
  audit->require_subcommand(1);
  audit->footer(
      "Examples:\n"
      "  plumb audit export --since 2026-01-01 --format json --out audit.json\n"
      "  plumb audit export --since 2026-10-01 --format html --out audit.html");
  auto* sub = audit->add_subcommand(
      "export", "Per node: what was applied, when, from which commit, by whom; with the "
                "journal's hash-chain head");
  sub->add_option("--since", a.since, "Runs started on or after this day (YYYY-MM-DD, UTC) or "
                                      "RFC 3339 time")
      ->required();
  AddFormat(*sub, a.format, "json (plumb.audit/v1) or html (one self-contained page)",
            {"json", "html"});
  sub->add_option("--out", a.file, "Write here (atomically) instead of stdout");
  AddStoreOption(*sub, a.store);
  sub->footer(
      "The export carries the chain's head hash: keep it, and later `plumb history --verify\n"
      "--anchor HASH` proves the journal still holds what was exported. A journal whose chain\n"
      "does not verify is exported all the same, marked so (exit 1).\n\n"
      "Examples:\n"
      "  plumb audit export --since 2026-01-01 --format json --out audit.json\n"
      "  plumb audit export --since 2026-10-01 --format html --out audit.html\n"
      "  plumb audit export --since 2026-11-30T22:00:00Z --journal /var/lib/plumb/journal.db");
  return sub;
}

}  // namespace plumb::cli
