// plumb facts merge: one facts snapshot from the parts of a sharded gather (or of several
// runners' gathers), for plan/drift --facts. Reads files only; contacts nothing.
#include <iostream>

#include "cli/gather_command.h"
#include "cmd/command.h"
#include "plans/observe/facts_merge.h"

namespace plumb::cmd {

void RegisterFacts(CLI::App& app, GlobalOptions& /*g*/, std::function<int()>& run) {
  static cli::FactsMergeArgs a;
  const cli::FactsCommand c = cli::AddFactsCommand(app, a);
  c.merge->callback([&run] {
    run = [] { return plans::MergeFactsFiles(a.parts, a.merge, a.output, std::cout, std::cerr); };
  });
}

}  // namespace plumb::cmd
