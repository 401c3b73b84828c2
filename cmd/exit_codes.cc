// plumb exit-codes: the exit code table (schemas/exit_codes.h) for people and scripts. Each
// verb's --help ends with its rows, `plumb --help` summarises them, and the README's table is
// this command's markdown (tests/e2e/exit_codes.sh keeps them equal and checks behaviour).
#include <algorithm>
#include <cstdio>
#include <string>

#include "cli/about_commands.h"
#include "cmd/command.h"

namespace plumb::cmd {

namespace {

int RunExitCodes(const GlobalOptions& g) {
  std::fputs((g.format == "json" ? ExitCodesJsonText() : ExitCodesMarkdown()).c_str(), stdout);
  return ExitCodeFor("*", Outcome::kOk);
}

}  // namespace

void RegisterExitCodes(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  CLI::App* sub = cli::AddExitCodesCommand(app, g);
  sub->callback([&run, &g] { run = [&g] { return RunExitCodes(g); }; });
}

// "Exit codes:" at the end of every subcommand's --help, from the table.
void AppendExitCodeHelp(CLI::App& app, const std::string& prefix) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    const std::string verb = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    if (!sub->get_subcommands([](CLI::App*) { return true; }).empty()) {
      AppendExitCodeHelp(*sub, verb);   // bmc: its verbs have their own rows
      // A verb that runs itself as well (acceptance, acceptance verify) has rows of its own.
      const bool own = std::any_of(ExitCodeTable().begin(), ExitCodeTable().end(),
                                   [&](const ExitCodeRow& r) { return r.verb == verb; });
      if (!own) continue;
    }
    const std::string footer = sub->get_footer();
    sub->footer((footer.empty() ? "" : footer + "\n\n") + ExitCodesHelp(verb));
  }
}

}  // namespace plumb::cmd
