// What main reads from the command line besides the flags (cli/command_line.h): a mistyped
// verb, --color on every listed command, whether the repo was given, the retired count --limit.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command_line.h"

using namespace plumb;

namespace {

// plumb's shape in small: `plan --repo`, `apply`, `bmc inventory --repo`, a hidden `man`.
struct SmallCli {
  CLI::App app{"t", "plumb"};
  std::string repo = ".", color = "auto";
  SmallCli() {
    app.add_subcommand("plan", "Plan")->add_option("--repo", repo);
    app.add_subcommand("apply", "Apply");
    app.add_subcommand("bmc", "BMCs")->add_subcommand("inventory", "Read")->add_option("--repo", repo);
    app.add_subcommand("man", "")->group("");
  }
  void Parse(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    app.parse(static_cast<int>(argv.size()), argv.data());
  }
  std::optional<std::string> Unknown(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return cli::UnknownVerb(app, static_cast<int>(argv.size()), argv.data());
  }
};

}  // namespace

TEST_CASE("command_line: a mistyped verb is named with the nearest one; a known verb passes") {
  SmallCli c;
  auto r = c.Unknown({"plumb", "-v", "pln", "--repo", "x"});   // flags before it are skipped
  REQUIRE(r);
  CHECK(*r == "plumb: error: unknown command 'pln'\n"
              "  hint: did you mean 'plumb plan'?\n"
              "  hint: plumb --help lists the commands\n");
  CHECK_FALSE(c.Unknown({"plumb", "plan", "--repo", "x"}));
  CHECK_FALSE(c.Unknown({"plumb", "--version"}));
  auto far = c.Unknown({"plumb", "zzzzzzzz"});
  REQUIRE(far);
  CHECK(far->find("did you mean") == std::string::npos);
  CHECK(far->find("unknown command 'zzzzzzzz'") != std::string::npos);
}

TEST_CASE("command_line: --color reaches every listed command, nested ones too, not hidden ones") {
  SmallCli c;
  cli::AddColorOption(c.app, c.color);
  CHECK(c.app.get_subcommand("plan")->get_option_no_throw("--color") != nullptr);
  CHECK(c.app.get_subcommand("bmc")->get_subcommand("inventory")->get_option_no_throw("--color") != nullptr);
  CHECK(c.app.get_subcommand("man")->get_option_no_throw("--color") == nullptr);
  c.Parse({"plumb", "bmc", "inventory", "--color", "never"});
  CHECK(c.color == "never");
  SmallCli bad;
  cli::AddColorOption(bad.app, bad.color);
  CHECK_THROWS_AS(bad.Parse({"plumb", "plan", "--color", "pink"}), CLI::ValidationError);
}

TEST_CASE("command_line: the repo is given by --repo on any parsed command, or by apply") {
  SmallCli plain;
  plain.Parse({"plumb", "plan"});
  CHECK_FALSE(cli::RepoIsGiven(plain.app));
  SmallCli given;
  given.Parse({"plumb", "plan", "--repo", "/r"});
  CHECK(cli::RepoIsGiven(given.app));
  SmallCli nested;
  nested.Parse({"plumb", "bmc", "inventory", "--repo", "/r"});
  CHECK(cli::RepoIsGiven(nested.app));
  SmallCli apply;
  apply.Parse({"plumb", "apply"});
  CHECK(cli::RepoIsGiven(apply.app));
}

TEST_CASE("command_line: the retired count --limit is hidden, and refused with the right hint") {
  CLI::App app{"t", "plumb"};
  std::string old;
  cli::AddRetiredCountLimit(*app.add_subcommand("runs", "Runs"), old);
  CHECK(app.get_subcommand("runs")->get_option("--limit")->get_group().empty());
  CHECK_FALSE(cli::RetiredCountLimitRefusal("runs", ""));
  CHECK(*cli::RetiredCountLimitRefusal("runs", "5") ==
        "plumb runs: error: --limit takes node patterns elsewhere; the number shown is --last N\n"
        "  hint: plumb runs --last 5\n");
  CHECK(cli::RetiredCountLimitRefusal("history", "gpu001")->find(
            "hint: plumb history gpu001   (one node's steps)") != std::string::npos);
  CHECK(cli::RetiredCountLimitRefusal("history", "gpu*")->find("takes one node's name, no pattern") !=
        std::string::npos);
  CHECK(cli::RetiredCountLimitRefusal("runs", "gpu*")->find("plumb runs lists runs") != std::string::npos);
}
