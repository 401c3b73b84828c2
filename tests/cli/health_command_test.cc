// `plumb health`'s command line (cli/health_command.h): each flag lands in the health request.
#include <doctest/doctest.h>

#include <string>

#include <CLI/CLI.hpp>

#include "cli/health_command.h"
#include "cli/parse_args.h"

using namespace plumb;
using cli::testing::ParseArgs;

TEST_CASE("health_command: the flags land in the health request and the global options") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::HealthArgs a;
  cli::AddHealthCommand(app, g, a);
  ParseArgs(app, {"health", "--repo", "pod-a", "--limit", "@h100", "--format", "junit", "--out",
                  "health.xml", "--fanout", "4", "--timeout", "60", "--allow-busy",
                  "--accept-new-host-keys"});
  CHECK(g.repo == "pod-a");
  CHECK(a.req.limit == "@h100");
  CHECK(g.format == "junit");
  CHECK(a.req.file == "health.xml");
  CHECK(a.req.fanout == 4);
  CHECK(a.req.timeout_s == 60);
  CHECK(a.req.allow_busy);
  CHECK(a.accept_new_host_keys);
}

TEST_CASE("health_command: --format takes text, json, junit and prom, not drift's sarif") {
  CLI::App prom{"t", "plumb"};
  cli::GlobalOptions g;
  cli::HealthArgs a;
  CLI::App* sub = cli::AddHealthCommand(prom, g, a);
  CHECK(sub->get_option("--limit")->get_description().rfind("Nodes to check:", 0) == 0);
  ParseArgs(prom, {"health", "--format", "prom"});
  CHECK(g.format == "prom");
  CLI::App sarif{"t", "plumb"};
  cli::GlobalOptions g2;
  cli::HealthArgs b;
  cli::AddHealthCommand(sarif, g2, b);
  CHECK_THROWS_AS(ParseArgs(sarif, {"health", "--format", "sarif"}), CLI::ValidationError);
}
