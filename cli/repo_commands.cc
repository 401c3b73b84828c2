#include "cli/repo_commands.h"

#include "cli/shared_options.h"

namespace plumb::cli {

CLI::App* AddValidateCommand(CLI::App& app, GlobalOptions& g) {
  auto* sub = app.add_subcommand(
      "validate",
      "Check the cluster repo at a git ref: schemas, references, group cycles, pin coherence");
  AddSourceOptions(*sub, g);
  AddFormat(*sub, g.format, "Output: text (diagnostics on stderr) or json", {"text", "json"});
  sub->footer(
      "Reads inventory.yaml, stacks/*.yaml, rollouts/*.yaml and waivers.yaml as committed at\n"
      "--ref (no checkout) and reports every problem at once as file:line:column with the key\n"
      "and a hint.\n\n"
      "Examples:\n"
      "  plumb validate                          # the repo in ., at HEAD\n"
      "  plumb validate --repo pod-a --ref main  # a branch (or a tag, or a short SHA)\n"
      "  plumb validate --working-tree           # uncommitted edits, with a warning\n"
      "  plumb validate --format json | jq '.diagnostics[] | select(.severity==\"error\")'");
  return sub;
}

CLI::App* AddShowCommand(CLI::App& app, GlobalOptions& g, ShowArgs& a) {
  auto* sub = app.add_subcommand(
      "show", "Print one node's merged desired state with the file:line every value came from");
  sub->add_option("node", a.node, "Node name, as in inventory.yaml")->required();
  AddSourceOptions(*sub, g);
  AddFormat(*sub, g.format, "Output: text or json", {"text", "json"});
  sub->footer(
      "The stack comes from the nearest group that names one; group overrides then apply,\n"
      "parents before children, the node's groups in listed order (later wins). Mappings merge,\n"
      "scalars and lists replace.\n\n"
      "Examples:\n"
      "  plumb show gpu001                       # at HEAD of the repo in .\n"
      "  plumb show gpu001 --ref upgrade         # what a tag or branch would set\n"
      "  plumb show gpu001 --format json | jq '.origins[\"/nvidia/driver\"]'");
  return sub;
}

CLI::App* AddDiffCommand(CLI::App& app, GlobalOptions& g, DiffArgs& a) {
  auto* sub = app.add_subcommand(
      "diff", "Desired-state changes between two commits of the cluster repo, per node and key");
  // --repo alone: the two commits are its arguments, and uncommitted files have none.
  sub->add_option("--repo", g.repo, "Cluster repo (a git repository)")->capture_default_str();
  sub->add_option("REV1", a.from, "The older commit (branch, tag, SHA)")->required();
  sub->add_option("REV2", a.to, "The newer commit")->required();
  AddFormat(*sub, g.format, "text, json, or markdown (for a pull-request comment)",
            {"text", "json", "markdown"});
  sub->add_flag("--detailed-exitcode", a.detailed_exitcode, "Exit 2 when anything changes");
  sub->footer(
      "Examples:\n"
      "  plumb diff main HEAD\n"
      "  plumb diff origin/main $SHA --format markdown > comment.md");
  return sub;
}

}  // namespace plumb::cli
