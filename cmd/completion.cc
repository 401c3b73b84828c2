// plumb completion bash|zsh|fish: a completion script generated from the CLI itself
// (cli/completion.h), and the hidden `plumb __nodes` the scripts call for --limit.
#include <cstdio>

#include "cli/completion.h"
#include "cmd/cli_doc.h"
#include "cmd/command.h"
#include "cmd/repo_load.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kCompletionVerb = "completion";

namespace {

int RunCompletion(const CLI::App& root, const std::string& shell) {
  const cli::CommandDoc doc = DescribeCommand(root, "plumb");
  const std::string script = shell == "bash"  ? cli::BashCompletion(doc)
                             : shell == "zsh" ? cli::ZshCompletion(doc)
                                              : cli::FishCompletion(doc);
  std::fputs(script.c_str(), stdout);
  return ExitCodeFor(kCompletionVerb, Outcome::kOk);
}

// One name a line: the nodes, then the groups as @group (what --limit takes). Quiet on a
// repo it cannot load: a completion shows nothing rather than an error mid-line.
int RunNodes(const GlobalOptions& g) {
  inventory::LoadedCluster lc = LoadRepo(g.repo, g.ref, g.working_tree);
  if (!lc.ok()) return ExitCodeFor(kCompletionVerb, Outcome::kError);
  // bash's `compgen -W` expands its words ($(...) included): only names of the schema's
  // charset are printed, whatever a future schema lets through.
  auto safe = [](const std::string& name) {
    return !name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                                std::string::npos;
  };
  for (const auto& n : lc.cluster.nodes)
    if (safe(n.name)) std::printf("%s\n", n.name.c_str());
  for (const auto& [name, group] : lc.cluster.groups)
    if (safe(name)) std::printf("@%s\n", name.c_str());
  return ExitCodeFor(kCompletionVerb, Outcome::kOk);
}

}  // namespace

void RegisterCompletion(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static std::string shell;
  auto* sub = app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish)");
  sub->add_option("shell", shell, "The shell")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  sub->footer(
      "Completes commands, options, the values of --format and the like, and node names and\n"
      "@groups of the cluster repo (--repo, else the one around .) after --limit.\n\n"
      "Examples:\n"
      "  source <(plumb completion bash)                     this shell only\n"
      "  plumb completion bash > /etc/bash_completion.d/plumb\n"
      "  plumb completion zsh > \"${fpath[1]}/_plumb\"\n"
      "  plumb completion fish > ~/.config/fish/completions/plumb.fish");
  sub->callback([&run, &app] { run = [&app] { return RunCompletion(app, shell); }; });

  auto* nodes = app.add_subcommand("__nodes", "Node names and @groups, for completion");
  nodes->group("");   // hidden: the completion scripts call it
  AddSourceOptions(*nodes, g);
  nodes->callback([&run, &g] { run = [&g] { return RunNodes(g); }; });
}

}  // namespace plumb::cmd
