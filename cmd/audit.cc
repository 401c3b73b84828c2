// plumb audit export --since DATE --format json|html [--out FILE]: per node, what was applied,
// when, from which commit, by whom, with the journal's hash-chain head and verdict. Read-only:
// it reads the journal and nothing else. Exit 0 written and verified; 1 an error, or a journal
// whose chain does not verify (the export is written all the same, saying so).
#include <chrono>
#include <iostream>

#include "cli/shared_options.h"
#include "cmd/command.h"
#include "plans/core/clock.h"
#include "plans/report/journal_commands.h"

namespace plumb::cmd {

void RegisterAudit(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* a = new plans::report::AuditRequest;
  auto* audit = app.add_subcommand("audit", "Evidence for an auditor, from the journal");
  audit->require_subcommand(1);
  audit->footer(
      "Examples:\n"
      "  plumb audit export --since 2026-01-01 --format json --out audit.json\n"
      "  plumb audit export --since 2026-10-01 --format html --out audit.html");
  auto* sub = audit->add_subcommand(
      "export", "Per node: what was applied, when, from which commit, by whom; with the "
                "journal's hash-chain head");
  sub->add_option("--since", a->since, "Runs started on or after this day (YYYY-MM-DD, UTC) or "
                                       "RFC 3339 time")
      ->required();
  cli::AddFormat(*sub, a->format, "json (plumb.audit/v1) or html (one self-contained page)",
                 {"json", "html"});
  sub->add_option("--out", a->file, "Write here (atomically) instead of stdout");
  cli::AddStoreOption(*sub, a->store);
  sub->footer(
      "The export carries the chain's head hash: keep it, and later `plumb history --verify\n"
      "--anchor HASH` proves the journal still holds what was exported. A journal whose chain\n"
      "does not verify is exported all the same, marked so (exit 1).\n\n"
      "Examples:\n"
      "  plumb audit export --since 2026-01-01 --format json --out audit.json\n"
      "  plumb audit export --since 2026-10-01 --format html --out audit.html\n"
      "  plumb audit export --since 2026-11-30T22:00:00Z --journal /var/lib/plumb/journal.db");
  (void)g;
  sub->callback([&run, a] {
    run = [a] {
      a->now = plans::Rfc3339(std::chrono::system_clock::now());
      return plans::report::RunAuditExport(*a, std::cout, std::cerr);
    };
  });
}

}  // namespace plumb::cmd
