// plumb audit export --since DATE --format json|html [--out FILE]: per node, what was applied,
// when, from which commit, by whom, with the journal's hash-chain head and verdict. Read-only:
// it reads the journal and nothing else. Exit 0 written and verified; 1 an error, or a journal
// whose chain does not verify (the export is written all the same, saying so).
#include <chrono>
#include <iostream>

#include "cli/journal_commands.h"
#include "cmd/command.h"
#include "plans/core/clock.h"
#include "plans/report/journal_commands.h"

namespace plumb::cmd {

void RegisterAudit(CLI::App& app, GlobalOptions& /*g*/, std::function<int()>& run) {
  auto* a = new plans::report::AuditRequest;
  CLI::App* sub = cli::AddAuditCommand(app, *a);
  sub->callback([&run, a] {
    run = [a] {
      a->now = plans::Rfc3339(std::chrono::system_clock::now());
      return plans::report::RunAuditExport(*a, std::cout, std::cerr);
    };
  });
}

}  // namespace plumb::cmd
