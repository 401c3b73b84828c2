// `plumb gather`'s and `plumb facts merge`'s command lines (cli/gather_command.h).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/gather_command.h"
#include "cli/parse_args.h"

using namespace plumb;
using cli::testing::ParseArgs;

TEST_CASE("gather_command: the flags land in the gather request and the global options") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::GatherArgs a;
  CLI::App* sub = cli::AddGatherCommand(app, g, a);
  CHECK(sub->get_option("--fanout")->get_default_str() == "64");
  ParseArgs(app, {"gather", "--working-tree", "--limit", "gpu00[1-4],!gpu003", "--shard", "2/4",
                  "--format", "json", "--fanout", "256", "--accept-new-host-keys", "--no-bmc",
                  "--facts-out", "s2.json", "--print-probe-script"});
  CHECK(g.working_tree);
  CHECK(a.req.limit == "gpu00[1-4],!gpu003");
  CHECK(a.req.shard == "2/4");
  CHECK(g.format == "json");
  CHECK(a.req.fanout == 256);
  CHECK(a.accept_new_host_keys);
  CHECK(a.req.no_bmc);
  CHECK(a.req.facts_out == "s2.json");
  CHECK(a.print_probe_script);
}

TEST_CASE("gather_command: --format is text or json") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::GatherArgs a;
  cli::AddGatherCommand(app, g, a);
  CHECK_THROWS_AS(ParseArgs(app, {"gather", "--format", "markdown"}), CLI::ValidationError);
  CHECK(g.format == "text");
}

TEST_CASE("gather_command: facts merge takes existing parts, -o and the three allowances") {
  const std::string part = PLUMB_SOURCE_DIR "/README.md";   // any file that exists
  CLI::App app{"t", "plumb"};
  cli::FactsMergeArgs a;
  const cli::FactsCommand c = cli::AddFactsCommand(app, a);
  ParseArgs(app, {"facts", "merge", "-o", "facts.json", "--allow-duplicates",
                  "--allow-mixed-commits", "--allow-missing-shards", part, part});
  CHECK(c.merge->parsed());
  CHECK(a.parts == std::vector<std::string>{part, part});
  CHECK(a.output == "facts.json");
  CHECK(a.merge.allow_duplicates);
  CHECK(a.merge.allow_mixed_commits);
  CHECK(a.merge.allow_missing_shards);

  CLI::App missing{"t", "plumb"};
  cli::FactsMergeArgs b;
  cli::AddFactsCommand(missing, b);
  CHECK_THROWS_AS(ParseArgs(missing, {"facts", "merge", part + ".no-such-part"}), CLI::ValidationError);
  CLI::App none{"t", "plumb"};
  cli::FactsMergeArgs n;
  cli::AddFactsCommand(none, n);
  CHECK_THROWS_AS(ParseArgs(none, {"facts", "merge"}), CLI::RequiredError);
}
