// The CLI11 tree as data (cli/describe_app.h): what the man pages and the completions are
// generated from is what the parser accepts, hidden verbs and options left out.
#include <doctest/doctest.h>

#include <CLI/CLI.hpp>

#include "cli/describe_app.h"

using namespace plumb::cli;

namespace {

const OptionDoc* OptionNamed(const CommandDoc& c, const std::string& name) {
  for (const OptionDoc& o : c.options)
    for (const std::string& n : o.names)
      if (n == name) return &o;
  return nullptr;
}

}  // namespace

TEST_CASE("describe_app: options, positionals, choices and hidden parts of a CLI11 tree") {
  CLI::App app{"The tool", "plumb"};
  std::string format = "text", run, plan, hidden;
  bool verbose = false;
  int fanout = 64;
  app.add_flag("-v,--verbose", verbose, "Say more");
  CLI::App* apply = app.add_subcommand("apply", "Apply a plan\nmore text");
  apply->footer("Examples:\n  plumb apply plan.json");
  apply->add_option("plan", plan, "The plan file")->required();
  apply->add_option("--format", format, "text | json")->check(CLI::IsMember({"text", "json"}));
  apply->add_option("--resume", run, "Continue a run")->expected(0, 1);
  apply->add_option("--fanout", fanout, "Nodes at once")->capture_default_str();
  apply->add_option("--old", hidden, "(gone)")->group("");
  CLI::App* secret = app.add_subcommand("__nodes", "Hidden");
  secret->group("");

  const CommandDoc root = DescribeCommand(app, "plumb");
  CHECK(root.path == "plumb");
  CHECK(root.description == "The tool");
  const OptionDoc* v = OptionNamed(root, "--verbose");
  REQUIRE(v != nullptr);
  CHECK(v->names == std::vector<std::string>{"-v", "--verbose"});
  CHECK(v->value.empty());   // a flag takes no value
  CHECK_FALSE(v->positional);

  REQUIRE(root.subcommands.size() == 1);   // __nodes is hidden
  const CommandDoc& a = root.subcommands[0];
  CHECK(a.path == "plumb apply");
  CHECK(a.description == "Apply a plan\nmore text");
  CHECK(a.footer == "Examples:\n  plumb apply plan.json");
  const OptionDoc* p = OptionNamed(a, "plan");
  REQUIRE(p != nullptr);
  CHECK(p->positional);
  CHECK(p->required);
  CHECK(p->value == "TEXT");
  const OptionDoc* f = OptionNamed(a, "--format");
  REQUIRE(f != nullptr);
  CHECK(f->value == "TEXT");
  CHECK(f->choices == std::vector<std::string>{"text", "json"});
  CHECK_FALSE(f->value_optional);
  const OptionDoc* r = OptionNamed(a, "--resume");
  REQUIRE(r != nullptr);
  CHECK(r->value_optional);
  const OptionDoc* n = OptionNamed(a, "--fanout");
  REQUIRE(n != nullptr);
  CHECK(n->value == "INT");
  CHECK(n->default_value == "64");
  CHECK(OptionNamed(a, "--old") == nullptr);   // hidden option
}
