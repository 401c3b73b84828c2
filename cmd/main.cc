// plumb: keeps a GPU cluster's stack, firmware and fabric where a reviewed git commit says.
// This file only assembles the CLI from the subcommand table and maps failures to exit codes.
#include <cstdio>
#include <exception>
#include <functional>

#include <CLI/CLI.hpp>

#include "cli/command_line.h"
#include "cli/limit_check.h"
#include "cmd/command.h"
#include "cmd/repo_load.h"
#include "cmd/subcommands.h"
#include "plans/plan/node_select.h"
#include "schemas/exit_codes.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kMainVerb = "*";

int RefuseRetiredCountLimit(std::string_view verb, const std::string& value) {
  auto refused = cli::RetiredCountLimitRefusal(verb, value);
  if (!refused) return -1;
  std::fputs(refused->c_str(), stderr);
  return ExitCodeFor(verb, Outcome::kError);
}

}  // namespace plumb::cmd

int main(int argc, char** argv) {
  using namespace plumb::cmd;
  using plumb::ExitCodeFor;
  using plumb::Outcome;
  CLI::App app{
      "plumb keeps a GPU cluster's software stack, firmware and fabric exactly where a reviewed\n"
      "git commit says: validate the cluster repo, gather live state over SSH and Redfish, plan\n"
      "the difference, apply it rolling-with-drain, and report drift.\n\n" + plumb::ExitCodesSummary(),
      "plumb"};
  app.set_version_flag("--version", std::string("plumb ") + PLUMB_VERSION);
  app.require_subcommand(1);
  GlobalOptions global;
  std::function<int()> run;
  for (Register reg : kSubcommands) reg(app, global, run);
  plumb::cli::AddColorOption(app, global.color);
  AppendExitCodeHelp(app);
  std::vector<char*> args = plumb::cli::SplitEmptyLimitValues(argc, argv);   // --limit= reads as --limit ''
  argc = static_cast<int>(args.size()) - 1;
  argv = args.data();
  if (auto unknown = plumb::cli::UnknownVerb(app, argc, argv)) {
    std::fputs(unknown->c_str(), stderr);
    return ExitCodeFor(kMainVerb, Outcome::kError);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? ExitCodeFor(kMainVerb, Outcome::kOk) : ExitCodeFor(kMainVerb, Outcome::kError);
  }
  if (auto refused = plumb::cli::LimitNamingNoNode(app, argc, argv, plumb::plans::LimitNamesNoNode)) {
    std::fputs(refused->c_str(), stderr);
    return ExitCodeFor("*", Outcome::kError);
  }
  // From a subdirectory of the cluster repo, as git does: only when no --repo was given, and
  // not for apply, which reads an absent --repo as "the repo the plan file names".
  if (global.repo == "." && !plumb::cli::RepoIsGiven(app)) global.repo = DiscoverRepo(".");
  try {
    return run ? run() : ExitCodeFor(kMainVerb, Outcome::kError);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plumb: error: %s\n", e.what());
    return ExitCodeFor(kMainVerb, Outcome::kError);
  }
}
