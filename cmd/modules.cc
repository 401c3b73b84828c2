// plumb modules: the module registry as a table (plans/report/modules_table.h); the README's
// module table is this command's markdown (a test keeps the two equal).
#include <cstdio>

#include "cli/about_commands.h"
#include "cmd/command.h"
#include "modules/registry.h"
#include "plans/report/modules_table.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kModulesVerb = "modules";
namespace {

int RunModules(const GlobalOptions& g) {
  if (g.format == "json")
    std::printf("%s\n", plans::report::ModulesJson(modules::AllModules()).dump(2).c_str());
  else
    std::fputs(plans::report::ModulesMarkdown(modules::AllModules()).c_str(), stdout);
  return ExitCodeFor(kModulesVerb, Outcome::kOk);
}

}  // namespace

void RegisterModules(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  CLI::App* sub = cli::AddModulesCommand(app, g);
  sub->callback([&run, &g] { run = [&g] { return RunModules(g); }; });
}

}  // namespace plumb::cmd
