// The command lines of validate, show and diff (cli/repo_commands.h).
#include <doctest/doctest.h>

#include <string>

#include <CLI/CLI.hpp>

#include "cli/parse_args.h"
#include "cli/repo_commands.h"

using namespace plumb;
using cli::testing::ParseArgs;

TEST_CASE("repo_commands: validate and show read the source and --format; show needs a node") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::ShowArgs show;
  cli::AddValidateCommand(app, g);
  cli::AddShowCommand(app, g, show);
  ParseArgs(app, {"show", "gpu001", "--ref", "upgrade", "--format", "json"});
  CHECK(show.node == "gpu001");
  CHECK(g.ref == "upgrade");
  CHECK(g.format == "json");
  CLI::App validate{"t", "plumb"};
  cli::GlobalOptions gv;
  cli::AddValidateCommand(validate, gv);
  ParseArgs(validate, {"validate", "--working-tree", "--repo", "pod-a"});
  CHECK(gv.working_tree);
  CHECK(gv.repo == "pod-a");
  CLI::App bare{"t", "plumb"};
  cli::ShowArgs s2;
  cli::AddShowCommand(bare, gv, s2);
  CHECK_THROWS_AS(ParseArgs(bare, {"show"}), CLI::RequiredError);
}

TEST_CASE("repo_commands: diff takes two commits and --repo, no --ref") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::DiffArgs a;
  cli::AddDiffCommand(app, g, a);
  ParseArgs(app, {"diff", "origin/main", "abc123", "--repo", "pod-a", "--format", "markdown",
                  "--detailed-exitcode"});
  CHECK(a.from == "origin/main");
  CHECK(a.to == "abc123");
  CHECK(g.repo == "pod-a");
  CHECK(g.format == "markdown");
  CHECK(a.detailed_exitcode);
  CLI::App ref{"t", "plumb"};
  cli::DiffArgs b;
  cli::AddDiffCommand(ref, g, b);
  CHECK_THROWS_AS(ParseArgs(ref, {"diff", "a", "b", "--ref", "main"}), CLI::ExtrasError);
  CLI::App one{"t", "plumb"};
  cli::DiffArgs c;
  cli::AddDiffCommand(one, g, c);
  CHECK_THROWS_AS(ParseArgs(one, {"diff", "a"}), CLI::RequiredError);
}
