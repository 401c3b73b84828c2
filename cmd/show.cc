// plumb show NODE: one node's merged desired state, each value with the file:line it came from.
#include <cstdio>
#include <iostream>

#include "cli/repo_commands.h"
#include "cmd/command.h"
#include "cmd/repo_load.h"
#include "plans/report/node_show.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kShowVerb = "show";

namespace {

int RunShow(const GlobalOptions& g, const cli::ShowArgs& o) {
  inventory::LoadedCluster lc = LoadRepo(g.repo, g.ref, g.working_tree);
  if (!lc.ok()) {
    std::fputs(lc.diags.ToText().c_str(), stderr);
    std::fprintf(stderr, "plumb show: %s\n", RepoLoadFailure(lc, g.repo, g.ref, g.working_tree).ToString().c_str());
    return ExitCodeFor(kShowVerb, Outcome::kError);
  }
  return plans::report::ShowNode(lc, o.node, g.format, std::cout, std::cerr);
}

}  // namespace

void RegisterShow(CLI::App& app, GlobalOptions& global, std::function<int()>& run) {
  static cli::ShowArgs opts;
  CLI::App* sub = cli::AddShowCommand(app, global, opts);
  sub->callback([&run, &global] { run = [&global] { return RunShow(global, opts); }; });
}

}  // namespace plumb::cmd
