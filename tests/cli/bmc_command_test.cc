// `plumb bmc`'s command lines (cli/bmc_command.h): inventory, plan and reset fill BmcFlags;
// bmc apply fills apply's flags, and the ones it shares with apply reach apply's conflict rules.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/bmc_command.h"
#include "cli/parse_args.h"
#include "plans/session/apply_session.h"

using namespace plumb;
using cli::testing::ParseArgs;

namespace {

struct BmcCli {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  plans::BmcFlags o;
  cli::BmcApplyArgs f;
  cli::BmcCommand c = cli::AddBmcCommand(app, g, o, f);
};

}  // namespace

TEST_CASE("bmc_command: inventory's flags land in BmcFlags and the global options") {
  BmcCli b;
  ParseArgs(b.app, {"bmc", "inventory", "--targets", "t.txt", "--limit", "gpu1", "--node", "gpu[2-3]",
                    "--ca", "ca.pem", "--fingerprint", "sha256:AB", "--credentials", "env:BMC",
                    "--auth", "basic", "--fanout", "8", "--per-bmc", "2", "--timeout", "5",
                    "--task-timeout", "1h", "--power-timeout", "1m", "--format", "json", "-v",
                    "--out", "inv.json"});
  CHECK(b.c.inventory->parsed());
  CHECK(b.o.targets_file == "t.txt");
  CHECK(b.o.nodes == std::vector<std::string>{"gpu1", "gpu[2-3]"});
  CHECK(b.o.ca == "ca.pem");
  CHECK(b.o.fingerprint == "sha256:AB");
  CHECK(b.o.credentials == "env:BMC");
  CHECK(b.o.auth == "basic");
  CHECK(b.o.fanout == 8);
  CHECK(b.o.per_bmc == 2);
  CHECK(b.o.timeout_s == 5);
  CHECK(b.o.task_timeout == "1h");
  CHECK(b.o.power_timeout == "1m");
  CHECK(b.g.format == "json");
  CHECK(b.g.verbose);
  CHECK(b.o.out == "inv.json");
}

TEST_CASE("bmc_command: plan takes --desired, reset a NODE and --type; a verb is required") {
  BmcCli plan;
  ParseArgs(plan.app, {"bmc", "plan", "--desired", "d.json"});
  CHECK(plan.o.desired_file == "d.json");
  BmcCli reset;
  ParseArgs(reset.app, {"bmc", "reset", "gpu001", "--type", "force-off"});
  CHECK(reset.o.reset_node == "gpu001");
  CHECK(reset.o.reset_type == "force-off");
  CHECK(reset.c.reset->get_option("--type")->get_default_str() == "reboot");
  BmcCli no_node;
  CHECK_THROWS_AS(ParseArgs(no_node.app, {"bmc", "reset"}), CLI::RequiredError);
  BmcCli no_verb;
  CHECK_THROWS_AS(ParseArgs(no_verb.app, {"bmc"}), CLI::RequiredError);
  BmcCli bad_format;
  CHECK_THROWS_AS(ParseArgs(bad_format.app, {"bmc", "plan", "--format", "html"}), CLI::ValidationError);
}

TEST_CASE("bmc_command: bmc apply fills apply's flags; the shared ones given reach the conflict rules") {
  BmcCli b;
  ParseArgs(b.app, {"bmc", "apply", "--limit", "gpu1", "--node", "@h100", "--auto-approve",
                    "--journal", "j.db", "--lock-ttl", "1h", "--reboot-grace", "30", "--format",
                    "json", "--targets", "t.txt"});
  CHECK(b.f.limits == std::vector<std::string>{"gpu1", "@h100"});
  CHECK(b.f.a.auto_approve);
  CHECK(b.f.a.journal == "j.db");
  CHECK(b.f.a.lock_ttl == "1h");
  CHECK(b.g.format == "json");
  CHECK(b.f.refused_targets == "t.txt");   // refused later, by plans::BmcApplyFlagsOf
  CHECK(b.f.a.given == std::set<std::string>{"--store", "--lock-ttl", "--reboot-grace", "--format"});
  // --reboot-grace matters only to --resume, which bmc apply does not take: refused.
  const auto conflicts = plans::ApplyFlagConflicts(b.f.a.given, false);
  REQUIRE(conflicts.size() == 1);
  CHECK(conflicts[0].find("--reboot-grace") == 0);

  BmcCli valid;
  ParseArgs(valid.app, {"bmc", "apply", "--approved-by", "jane", "--task-timeout", "2h"});
  CHECK(valid.f.a.approved_by == "jane");
  CHECK(valid.f.a.task_timeout == "2h");
  CHECK(plans::ApplyFlagConflicts(valid.f.a.given, false).empty());
}

TEST_CASE("bmc_command: every bmc verb shows bmc's examples (set before the verbs are added)") {
  BmcCli b;
  for (CLI::App* verb : {b.c.inventory, b.c.plan, b.c.apply, b.c.reset})
    CHECK(verb->get_footer().find("plumb bmc reset gpu001 --type force-off") != std::string::npos);
}
