// `plumb acceptance`'s command line (cli/acceptance_command.h): the read run's flags and its
// own land in AcceptanceArgs; `acceptance verify` takes the report.
#include <doctest/doctest.h>

#include <string>

#include <CLI/CLI.hpp>

#include "cli/acceptance_command.h"
#include "cli/parse_args.h"

using namespace plumb;
using cli::testing::ParseArgs;

TEST_CASE("acceptance_command: the burn-in flags and the read run's land in AcceptanceArgs") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::AcceptanceArgs a;
  const cli::AcceptanceCommand c = cli::AddAcceptanceCommand(app, g, a);
  CHECK(c.acceptance->get_option("--dcgm-level")->get_default_str() == "3");
  ParseArgs(app, {"acceptance", "--ref", "v1.0", "--out", "handover", "--dcgm-level", "4",
                  "--timeout", "60", "--health-fanout", "2", "--operator", "Jane Doe",
                  "--allow-busy", "--fresh", "--limit", "@h100", "--facts", "f.json",
                  "--max-facts-age", "1h", "--no-bmc", "--accept-new-host-keys"});
  CHECK(g.ref == "v1.0");
  CHECK(a.out == "handover");
  CHECK(a.dcgm_level == 4);
  CHECK(a.timeout_s == 60);
  CHECK(a.health_fanout == 2);
  CHECK(a.operator_name == "Jane Doe");
  CHECK(a.allow_busy);
  CHECK(a.fresh);
  CHECK(a.read.run.limit == "@h100");
  CHECK(a.read.run.facts == "f.json");
  CHECK(a.read.run.max_facts_age == "1h");
  CHECK(a.read.run.no_bmc);
  CHECK(a.read.accept_new_host_keys);
  CHECK_FALSE(c.acceptance->got_subcommand("verify"));
}

TEST_CASE("acceptance_command: verify takes the report, and is seen as given") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::AcceptanceArgs a;
  const cli::AcceptanceCommand c = cli::AddAcceptanceCommand(app, g, a);
  ParseArgs(app, {"acceptance", "verify", "handover/acceptance.json"});
  CHECK(a.verify_path == "handover/acceptance.json");
  CHECK(c.acceptance->got_subcommand("verify"));   // what keeps acceptance's own run from starting
  CLI::App bare{"t", "plumb"};
  cli::AcceptanceArgs b;
  cli::AddAcceptanceCommand(bare, g, b);
  CHECK_THROWS_AS(ParseArgs(bare, {"acceptance", "verify"}), CLI::RequiredError);
}
