// The read run's flags (cli/read_run_options.h) as `plumb plan` and `plumb drift` take them
// (cli/plan_command.h, cli/drift_command.h), and each verb's own.
#include <doctest/doctest.h>

#include <string>

#include <CLI/CLI.hpp>

#include "cli/drift_command.h"
#include "cli/parse_args.h"
#include "cli/plan_command.h"

using namespace plumb;
using cli::testing::ParseArgs;

TEST_CASE("read_run_commands: plan's flags land in PlanArgs, the read run's and the source") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::PlanArgs a;
  CLI::App* sub = cli::AddPlanCommand(app, g, a);
  CHECK(sub->get_option("--max-facts-age")->get_default_str() == "24h");
  CHECK(sub->get_option("--fanout")->get_default_str() == "64");
  ParseArgs(app, {"plan", "--ref", "abc123", "--limit", "gpu0[01-16]", "--facts", "f.json",
                  "--max-facts-age", "1h", "--fanout", "8", "--no-bmc", "--accept-new-host-keys",
                  "--trust-policy-from", "origin/main", "--no-scheduler", "--out", "plan.json",
                  "--detailed-exitcode", "--format", "markdown"});
  CHECK(g.ref == "abc123");
  CHECK(a.read.run.limit == "gpu0[01-16]");
  CHECK(a.read.run.facts == "f.json");
  CHECK(a.read.run.max_facts_age == "1h");
  CHECK(a.read.run.fanout == 8);
  CHECK(a.read.run.no_bmc);
  CHECK(a.read.accept_new_host_keys);
  CHECK(a.read.trust_from == "origin/main");
  CHECK(a.read.no_scheduler);
  CHECK(a.out == "plan.json");
  CHECK(a.detailed_exitcode);
  CHECK(g.format == "markdown");
  CHECK(a.read.check_trust);   // plan never plans a commit the signing policy refuses
}

TEST_CASE("read_run_commands: drift takes the read run's flags, its formats and --out") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::DriftArgs a;
  cli::AddDriftCommand(app, g, a);
  ParseArgs(app, {"drift", "--limit", "@h100", "--facts", "f.json", "--format", "sarif", "--out",
                  "drift.sarif"});
  CHECK(a.read.run.limit == "@h100");
  CHECK(a.read.run.facts == "f.json");
  CHECK(g.format == "sarif");
  CHECK(a.out == "drift.sarif");
}

TEST_CASE("read_run_commands: each verb refuses a format that is not its own") {
  CLI::App plan{"t", "plumb"};
  cli::GlobalOptions gp;
  cli::PlanArgs pa;
  cli::AddPlanCommand(plan, gp, pa);
  CHECK_THROWS_AS(ParseArgs(plan, {"plan", "--format", "sarif"}), CLI::ValidationError);
  CLI::App drift{"t", "plumb"};
  cli::GlobalOptions gd;
  cli::DriftArgs da;
  cli::AddDriftCommand(drift, gd, da);
  CHECK_THROWS_AS(ParseArgs(drift, {"drift", "--format", "markdown"}), CLI::ValidationError);
  // drift judges no commit: it has no --trust-policy-from, nor --no-scheduler.
  CLI::App drift2{"t", "plumb"};
  cli::DriftArgs db;
  cli::AddDriftCommand(drift2, gd, db);
  CHECK_THROWS_AS(ParseArgs(drift2, {"drift", "--trust-policy-from", "main"}), CLI::ExtrasError);
}
