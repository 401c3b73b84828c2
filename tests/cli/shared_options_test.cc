// The options several verbs share (cli/shared_options.h): declared alike, parsed alike, checked
// alike.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/shared_options.h"

using namespace plumb;

namespace {

void Parse(CLI::App& app, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("shared_options: source, store, host keys and limit parse into their variables") {
  CLI::App app{"t", "plumb"};
  std::string repo = ".", ref = "HEAD", store, limit;
  bool tree = false, accept = false;
  cli::AddSourceOptions(app, repo, ref, tree);
  cli::AddStoreOption(app, store);
  cli::AddHostKeysFlag(app, accept);
  cli::AddNodeLimit(app, limit, "Nodes to check");
  Parse(app, {"plumb", "--repo", "/r", "--ref", "v1", "--working-tree", "--journal", "j.db",
              "--accept-new-host-keys", "--limit", "gpu00[1-4]"});
  CHECK(repo == "/r");
  CHECK(ref == "v1");
  CHECK(tree);
  CHECK(store == "j.db");   // --journal is --store's old name
  CHECK(accept);
  CHECK(limit == "gpu00[1-4]");
  CHECK(app.get_option("--limit")->get_description().rfind("Nodes to check: globs", 0) == 0);
  CHECK(app.get_option("--repo")->get_default_str() == ".");
}

TEST_CASE("shared_options: --format takes only its choices and shows its default") {
  CLI::App app{"t", "plumb"};
  std::string format = "text";
  cli::AddFormat(app, format, "text | json", {"text", "json"});
  CHECK(app.get_option("--format")->get_default_str() == "text");
  Parse(app, {"plumb", "--format", "json"});
  CHECK(format == "json");
  CLI::App strict{"t", "plumb"};
  std::string f2 = "text";
  cli::AddFormat(strict, f2, "text | json", {"text", "json"});
  CHECK_THROWS_AS(Parse(strict, {"plumb", "--format", "yaml"}), CLI::ValidationError);
  CHECK(f2 == "text");
}
