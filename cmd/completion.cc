// plumb completion bash|zsh|fish: a completion script generated from the CLI itself
// (cli/completion.h), and the hidden `plumb __nodes` the scripts call for --limit.
#include <cstdio>

#include "cli/about_commands.h"
#include "cli/completion.h"
#include "cli/completion_words.h"
#include "cli/describe_app.h"
#include "cmd/command.h"
#include "cmd/repo_load.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kCompletionVerb = "completion";

namespace {

int RunCompletion(const CLI::App& root, const std::string& shell) {
  std::fputs(cli::CompletionScript(shell, cli::DescribeCommand(root, "plumb")).c_str(), stdout);
  return ExitCodeFor(kCompletionVerb, Outcome::kOk);
}

// One name a line: the nodes, then the groups as @group (what --limit takes). Quiet on a
// repo it cannot load: a completion shows nothing rather than an error mid-line.
int RunNodes(const GlobalOptions& g) {
  inventory::LoadedCluster lc = LoadRepo(g.repo, g.ref, g.working_tree);
  if (!lc.ok()) return ExitCodeFor(kCompletionVerb, Outcome::kError);
  std::vector<std::string> nodes, groups;
  for (const auto& n : lc.cluster.nodes) nodes.push_back(n.name);
  for (const auto& [name, group] : lc.cluster.groups) groups.push_back(name);
  std::fputs(cli::NodeCompletionWords(nodes, groups).c_str(), stdout);
  return ExitCodeFor(kCompletionVerb, Outcome::kOk);
}

}  // namespace

void RegisterCompletion(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  static std::string shell;
  CLI::App* sub = cli::AddCompletionCommand(app, shell);
  sub->callback([&run, &app] { run = [&app] { return RunCompletion(app, shell); }; });
  CLI::App* nodes = cli::AddNodesCommand(app, g);
  nodes->callback([&run, &g] { run = [&g] { return RunNodes(g); }; });
}

}  // namespace plumb::cmd
