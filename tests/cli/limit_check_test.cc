// A --limit that names no node is refused right after parsing (cli/limit_check.h): which verb,
// which argument, which flag's names, and the hint; `--limit=` reads as `--limit ''`.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/limit_check.h"

using namespace plumb;

namespace {

// Refuses "" and "!" as plans::LimitNamesNoNode does; any other value names a node.
std::optional<Diagnostic> FakeLimitJudge(std::string_view v) {
  if (v.empty() || v == "!")
    return Diagnostic::Error("limit.empty", "--limit '" + std::string(v) + "' names no node: empty",
                             {}, {}, "leave --limit out");
  return std::nullopt;
}

// A small CLI: `apply --limit`, `bmc inventory --limit/--node` (repeatable), and `runs` with the
// retired count --limit (hidden).
struct LimitCli {
  CLI::App app{"t", "plumb"};
  std::string apply_limit, runs_limit;
  std::vector<std::string> bmc_nodes;
  LimitCli() {
    app.add_subcommand("apply")->add_option("--limit", apply_limit, "Only these nodes");
    app.add_subcommand("bmc")->add_subcommand("inventory")->add_option("--limit,--node", bmc_nodes,
                                                                        "Only these nodes");
    app.add_subcommand("runs")->add_option("--limit", runs_limit)->group("");
  }
  // Parses `args` as main does (empty values split first); the refusal or nullopt.
  std::optional<std::string> Refusal(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    std::vector<char*> split = cli::SplitEmptyLimitValues(static_cast<int>(argv.size()), argv.data());
    const int argc = static_cast<int>(split.size()) - 1;
    app.parse(argc, split.data());
    return cli::LimitNamingNoNode(app, argc, split.data(), FakeLimitJudge);
  }
};

}  // namespace

TEST_CASE("limit_check: an empty --limit is refused naming the verb, the argument and a hint") {
  LimitCli c;
  auto r = c.Refusal({"plumb", "apply", "--limit", ""});
  REQUIRE(r);
  CHECK(*r == "plumb apply: error: --limit '' names no node: empty (argument 2)\n"
              "  hint: leave --limit out\n");
}

TEST_CASE("limit_check: --limit= reads as --limit '' and is refused") {
  LimitCli c;
  auto r = c.Refusal({"plumb", "apply", "--limit="});
  REQUIRE(r);
  CHECK(*r == "plumb apply: error: --limit '' names no node: empty (argument 2)\n"
              "  hint: leave --limit out\n");
}

TEST_CASE("limit_check: a nested verb's --limit/--node, the refused one among several") {
  LimitCli c;
  auto r = c.Refusal({"plumb", "bmc", "inventory", "--node", "gpu1", "--node=!"});
  REQUIRE(r);
  CHECK(*r == "plumb bmc inventory: error: --limit/--node '!' names no node: empty (argument 5)\n"
              "  hint: leave --limit out\n");
}

TEST_CASE("limit_check: the retired count --limit of runs gets the --last hint") {
  LimitCli c;
  auto r = c.Refusal({"plumb", "runs", "--limit", ""});
  REQUIRE(r);
  CHECK(*r == "plumb runs: error: --limit '' names no node: empty (argument 2)\n"
              "  hint: plumb runs --last N counts; --limit is not taken here\n");
}

TEST_CASE("limit_check: a --limit naming nodes, or none given, passes") {
  CHECK_FALSE(LimitCli().Refusal({"plumb", "apply", "--limit", "gpu[1-3]"}));
  CHECK_FALSE(LimitCli().Refusal({"plumb", "apply"}));
  CHECK_FALSE(LimitCli().Refusal({"plumb", "bmc", "inventory", "--limit=gpu1"}));
}

TEST_CASE("limit_check: after -- the words are arguments, not split") {
  std::vector<std::string> args = {"plumb", "apply", "--", "--limit="};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::vector<char*> out = cli::SplitEmptyLimitValues(4, argv.data());
  REQUIRE(out.size() == 5);
  CHECK(std::string(out[3]) == "--limit=");
  CHECK(out[4] == nullptr);
}
