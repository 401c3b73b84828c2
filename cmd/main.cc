// plumb: keeps a GPU cluster's stack, firmware and fabric where a reviewed git commit says.
// This file only assembles the CLI from the subcommand table and maps failures to exit codes.
#include <cstdio>
#include <exception>
#include <functional>

#include <CLI/CLI.hpp>

#include "cli/limit_check.h"
#include "cmd/command.h"
#include "cmd/repo_load.h"
#include "cmd/subcommands.h"
#include "plans/plan/node_select.h"
#include "schemas/exit_codes.h"
#include "schemas/suggest.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kMainVerb = "*";

void AddSourceOptions(CLI::App& sub, GlobalOptions& g) {
  sub.add_option("--repo", g.repo, "Cluster repo (a git repository)")->capture_default_str();
  sub.add_option("--ref", g.ref, "Git ref to read: branch, tag, short or full SHA")
      ->capture_default_str();
  sub.add_flag("--working-tree", g.working_tree,
               "Read the cluster files as they are on disk, uncommitted changes included, "
               "instead of --ref (the output says so)");
}

void AddRetiredCountLimit(CLI::App& sub, std::string& value) {
  sub.add_option("--limit", value)->group("");
}

int RefuseRetiredCountLimit(std::string_view verb, const std::string& value) {
  if (value.empty()) return -1;
  const std::string v(verb);
  std::fprintf(stderr, "plumb %s: error: --limit takes node patterns elsewhere; the number "
                       "shown is --last N\n", v.c_str());
  // A number meant a count; anything else was a node (pattern): history takes one node as
  // its argument, runs lists runs and points there.
  const bool count = value.find_first_not_of("0123456789") == std::string::npos;
  const bool one_node = value.find_first_of("*?[],@! '\"$\\") == std::string::npos;
  const std::string shown = schemas::Printable(value);
  if (count) std::fprintf(stderr, "  hint: plumb %s --last %s\n", v.c_str(), shown.c_str());
  else if (verb == "history" && one_node)
    std::fprintf(stderr, "  hint: plumb history %s   (one node's steps)\n", shown.c_str());
  else if (verb == "history")
    std::fprintf(stderr, "  hint: plumb history NODE takes one node's name, no pattern\n");
  else
    std::fprintf(stderr, "  hint: plumb history NODE shows one node's steps; plumb %s lists runs\n", v.c_str());
  return ExitCodeFor(verb, Outcome::kError);
}

// --color on every verb and nested command, one meaning everywhere (cmd/color.h).
void AddColorOption(CLI::App& app, GlobalOptions& g) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;   // hidden verbs print no report
    sub->add_option("--color", g.color, "Colour: auto (a terminal, NO_COLOR unset), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
    AddColorOption(*sub, g);
  }
}

// `plumb pln`: CLI11 would say "A subcommand is required"; the user meant a verb. The first
// word that is not a flag must be one of them. -1 when it is (or there is none).
int UnknownVerb(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    std::vector<std::string> verbs;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name() == word) return -1;
      verbs.push_back(sub->get_name());
    }
    std::fprintf(stderr, "plumb: error: unknown command '%s'\n", schemas::Printable(word).c_str());
    const std::string best = schemas::DidYouMean(word, verbs);
    if (!best.empty()) std::fprintf(stderr, "  hint: did you mean 'plumb %s'?\n", best.c_str());
    std::fprintf(stderr, "  hint: plumb --help lists the commands\n");
    return ExitCodeFor(kMainVerb, Outcome::kError);
  }
  return -1;
}

// No search upwards for the repo: --repo was on the verb's command line, or the verb is apply
// (see main).
bool SkipRepoDiscovery(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {   // the parsed ones
    if (sub->get_name() == "apply") return true;
    if (const CLI::Option* o = sub->get_option_no_throw("--repo"); o != nullptr && o->count() > 0)
      return true;
    if (SkipRepoDiscovery(*sub)) return true;
  }
  return false;
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
  AddColorOption(app, global);
  AppendExitCodeHelp(app);
  std::vector<char*> args = plumb::cli::SplitEmptyLimitValues(argc, argv);   // --limit= reads as --limit ''
  argc = static_cast<int>(args.size()) - 1;
  argv = args.data();
  if (int rc = UnknownVerb(app, argc, argv); rc >= 0) return rc;
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
  if (global.repo == "." && !SkipRepoDiscovery(app)) global.repo = DiscoverRepo(".");
  try {
    return run ? run() : ExitCodeFor(kMainVerb, Outcome::kError);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plumb: error: %s\n", e.what());
    return ExitCodeFor(kMainVerb, Outcome::kError);
  }
}
