// plumb show NODE: one node's merged desired state, each value with the file:line it came from.
#include <cstdio>
#include <iostream>

#include "cli/shared_options.h"
#include "cmd/command.h"
#include "cmd/repo_load.h"
#include "plans/report/node_show.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kShowVerb = "show";

namespace {

struct ShowOptions {
  std::string node;
};

int RunShow(const GlobalOptions& g, const ShowOptions& o) {
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
  static ShowOptions opts;
  auto* sub = app.add_subcommand(
      "show", "Print one node's merged desired state with the file:line every value came from");
  sub->add_option("node", opts.node, "Node name, as in inventory.yaml")->required();
  AddSourceOptions(*sub, global);
  cli::AddFormat(*sub, global.format, "Output: text or json", {"text", "json"});
  sub->footer(
      "The stack comes from the nearest group that names one; group overrides then apply,\n"
      "parents before children, the node's groups in listed order (later wins). Mappings merge,\n"
      "scalars and lists replace.\n\n"
      "Examples:\n"
      "  plumb show gpu001                       # at HEAD of the repo in .\n"
      "  plumb show gpu001 --ref upgrade         # what a tag or branch would set\n"
      "  plumb show gpu001 --format json | jq '.origins[\"/nvidia/driver\"]'");
  sub->callback([&run, &global] { run = [&global] { return RunShow(global, opts); }; });
}

}  // namespace plumb::cmd
