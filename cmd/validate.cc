// plumb validate: load the cluster repo at a ref, check it, and say so.
#include <iostream>

#include "cli/shared_options.h"
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
  auto* sub = app.add_subcommand(
      "validate",
      "Check the cluster repo at a git ref: schemas, references, group cycles, pin coherence");
  AddSourceOptions(*sub, global);
  cli::AddFormat(*sub, global.format, "Output: text (diagnostics on stderr) or json",
                 {"text", "json"});
  sub->footer(
      "Reads inventory.yaml, stacks/*.yaml, rollouts/*.yaml and waivers.yaml as committed at\n"
      "--ref (no checkout) and reports every problem at once as file:line:column with the key\n"
      "and a hint.\n\n"
      "Examples:\n"
      "  plumb validate                          # the repo in ., at HEAD\n"
      "  plumb validate --repo pod-a --ref main  # a branch (or a tag, or a short SHA)\n"
      "  plumb validate --working-tree           # uncommitted edits, with a warning\n"
      "  plumb validate --format json | jq '.diagnostics[] | select(.severity==\"error\")'");
  sub->callback([&run, &global] { run = [&global] { return RunValidate(global); }; });
}

}  // namespace plumb::cmd
