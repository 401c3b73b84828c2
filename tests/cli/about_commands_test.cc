// The command lines of the verbs about plumb itself (cli/about_commands.h).
#include <doctest/doctest.h>

#include <string>

#include <CLI/CLI.hpp>

#include "cli/about_commands.h"
#include "cli/parse_args.h"

using namespace plumb;
using cli::testing::ParseArgs;

TEST_CASE("about_commands: completion takes bash, zsh or fish only") {
  CLI::App app{"t", "plumb"};
  std::string shell;
  cli::AddCompletionCommand(app, shell);
  ParseArgs(app, {"completion", "zsh"});
  CHECK(shell == "zsh");
  CLI::App tcsh{"t", "plumb"};
  std::string s2;
  cli::AddCompletionCommand(tcsh, s2);
  CHECK_THROWS_AS(ParseArgs(tcsh, {"completion", "tcsh"}), CLI::ValidationError);
}

TEST_CASE("about_commands: __nodes and __man are hidden; __nodes reads the source, __man a DIR") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  std::string dir;
  CLI::App* nodes = cli::AddNodesCommand(app, g);
  CLI::App* man = cli::AddManCommand(app, dir);
  CHECK(nodes->get_group().empty());
  CHECK(man->get_group().empty());
  ParseArgs(app, {"__nodes", "--repo", "pod-a", "--ref", "v1"});
  CHECK(g.repo == "pod-a");
  CHECK(g.ref == "v1");
  CLI::App m{"t", "plumb"};
  std::string d;
  cli::AddManCommand(m, d);
  ParseArgs(m, {"__man", "out/share/man"});
  CHECK(d == "out/share/man");
}

TEST_CASE("about_commands: schemas takes --out and --print; version, modules, exit-codes text or json") {
  CLI::App app{"t", "plumb"};
  cli::SchemasArgs a;
  cli::AddSchemasCommand(app, a);
  ParseArgs(app, {"schemas", "--out", ".schemas", "--print", "stack.schema.json"});
  CHECK(a.out == ".schemas");
  CHECK(a.print == "stack.schema.json");
  CLI::App verbs{"t", "plumb"};
  cli::GlobalOptions g;
  cli::AddVersionCommand(verbs, g);
  cli::AddModulesCommand(verbs, g);
  cli::AddExitCodesCommand(verbs, g);
  ParseArgs(verbs, {"exit-codes", "--format", "json"});
  CHECK(g.format == "json");
  for (const char* verb : {"version", "modules", "exit-codes"}) {
    CLI::App bad{"t", "plumb"};
    cli::GlobalOptions gb;
    cli::AddVersionCommand(bad, gb);
    cli::AddModulesCommand(bad, gb);
    cli::AddExitCodesCommand(bad, gb);
    CAPTURE(verb);
    CHECK_THROWS_AS(ParseArgs(bad, {verb, "--format", "yaml"}), CLI::ValidationError);
  }
}
