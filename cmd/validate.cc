// plumb validate: load the cluster repo at a ref, check it, and say so.
#include <iostream>

#include "cli/repo_commands.h"
#include "cmd/command.h"
#include "cmd/repo_load.h"
#include "plans/report/validation.h"

namespace plumb::cmd {

namespace {

int RunValidate(const GlobalOptions& g) {
  auto lc = std::make_unique<inventory::LoadedCluster>(LoadRepo(g.repo, g.ref, g.working_tree));
  int rc = plans::report::ShowValidation(*lc, g.format, std::cout, std::cerr);
  KeepUntilExit(std::move(lc));
  return rc;
}

}  // namespace

void RegisterValidate(CLI::App& app, GlobalOptions& global, std::function<int()>& run) {
  CLI::App* sub = cli::AddValidateCommand(app, global);
  sub->callback([&run, &global] { run = [&global] { return RunValidate(global); }; });
}

}  // namespace plumb::cmd
