#include "cli/about_commands.h"

#include "cli/shared_options.h"

namespace plumb::cli {

CLI::App* AddVersionCommand(CLI::App& app, GlobalOptions& g) {
  auto* sub = app.add_subcommand(
      "version", "Print plumb's version, the commit it was built from, its allocator and libraries");
  AddFormat(*sub, g.format, "text | json", {"text", "json"});
  sub->footer(
      "Examples:\n"
      "  plumb version                   for a bug report: version, commit, libraries\n"
      "  plumb version --format json     the same for a script\n"
      "  plumb --version                 the version alone");
  return sub;
}

CLI::App* AddSchemasCommand(CLI::App& app, SchemasArgs& a) {
  auto* sub = app.add_subcommand(
      "schemas", "List, print or write out the JSON Schemas plumb validates with (for editors)");
  sub->add_option("--out", a.out, "Write every schema into this directory");
  sub->add_option("--print", a.print, "Print one file, e.g. stack.schema.json");
  sub->footer(
      "The same schemas `plumb validate` uses, compiled into the binary. Write them next to\n"
      "your cluster repo and point yaml-language-server at them for completion and checks.\n\n"
      "Examples:\n"
      "  plumb schemas                               # list them\n"
      "  plumb schemas --out .schemas                # then, at the top of stacks/h100.yaml:\n"
      "  # yaml-language-server: $schema=../.schemas/stack.schema.json\n"
      "  plumb schemas --print rules/compat.yaml     # the CUDA -> driver table");
  return sub;
}

CLI::App* AddModulesCommand(CLI::App& app, GlobalOptions& g) {
  auto* sub = app.add_subcommand(
      "modules", "List the modules: the desired keys each checks, what it reads, how it changes "
                 "a node and how much that disturbs it");
  AddFormat(*sub, g.format, "text (a markdown table) | json", {"text", "json"});
  sub->footer("Examples:\n"
              "  plumb modules                   the table (the README's module table)\n"
              "  plumb modules --format json     for scripts and tests");
  return sub;
}

CLI::App* AddExitCodesCommand(CLI::App& app, GlobalOptions& g) {
  auto* sub = app.add_subcommand(
      "exit-codes", "List every command's exit codes and what each means (one table)");
  AddFormat(*sub, g.format, "text (a markdown table) | json", {"text", "json"});
  sub->footer("Examples:\n"
              "  plumb exit-codes                  the table (the README's exit code table)\n"
              "  plumb exit-codes --format json    [{command, outcome, code, meaning}]");
  return sub;
}

CLI::App* AddCompletionCommand(CLI::App& app, std::string& shell) {
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
  return sub;
}

CLI::App* AddNodesCommand(CLI::App& app, GlobalOptions& g) {
  auto* nodes = app.add_subcommand("__nodes", "Node names and @groups, for completion");
  nodes->group("");   // hidden: the completion scripts call it
  AddSourceOptions(*nodes, g);
  return nodes;
}

CLI::App* AddManCommand(CLI::App& app, std::string& dir) {
  auto* sub = app.add_subcommand("__man", "Write the man pages into DIR/man1 and DIR/man5");
  sub->group("");   // hidden: the build runs it
  sub->add_option("dir", dir, "Directory")->required();
  return sub;
}

}  // namespace plumb::cli
