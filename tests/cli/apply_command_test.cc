// `plumb apply`'s command line (cli/apply_command.h): each flag lands in plans::ApplyFlags or
// the global options, and the flags given are what apply's conflict rules see.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/apply_command.h"
#include "cli/parse_args.h"
#include "plans/session/apply_session.h"

using namespace plumb;
using cli::testing::ParseArgs;

namespace {

// apply as main adds it, parsed from `args` (after "apply"): the given flags are noted by the
// parse itself.
struct ParsedApply {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  plans::ApplyFlags a;
  cli::ApplyCommand c = cli::AddApplyCommand(app, g, a);
  explicit ParsedApply(std::vector<std::string> args) {
    args.insert(args.begin(), "apply");
    ParseArgs(app, args);
  }
  std::vector<std::string> Conflicts() const {
    return plans::ApplyFlagConflicts(a.given, !a.plan_file.empty());
  }
};

bool AnyConflictSays(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("apply_command: the plan file, the source, the record and the waits land where apply reads them") {
  ParsedApply p({"plan.json", "--repo", "/r", "--ref", "main", "--auto-approve", "--limit", "n[1-3]",
                 "--journal", "j.db", "--trust-policy-from", "origin/main", "--approved-by", "jane",
                 "--plan-out", "kept.json", "--reboot-timeout", "60", "--task-timeout", "90s",
                 "--power-timeout", "2m", "--poll-max-ms", "100", "--lock-ttl", "1h", "--format",
                 "json"});
  CHECK(p.a.plan_file == "plan.json");
  CHECK(p.g.repo == "/r");
  CHECK(p.g.ref == "main");
  CHECK(p.a.auto_approve);
  CHECK(p.a.limit == "n[1-3]");
  CHECK(p.a.journal == "j.db");   // --journal is --store's old name
  CHECK(p.a.trust_from == "origin/main");
  CHECK(p.a.approved_by == "jane");
  CHECK(p.a.plan_out == "kept.json");
  CHECK(p.a.reboot_timeout_s == 60);
  CHECK(p.a.task_timeout == "90s");
  CHECK(p.a.power_timeout == "2m");
  CHECK(p.a.poll_max_ms == 100);
  CHECK(p.a.lock_ttl == "1h");
  CHECK(p.g.format == "json");
  CHECK_FALSE(p.a.resume);
  // Each given flag is noted under its first name, the positional under its own.
  CHECK(p.a.given.count("plan") == 1);
  CHECK(p.a.given.count("--store") == 1);
  CHECK(p.a.given.count("--format") == 1);
  CHECK(p.a.given.count("--resume") == 0);
  CHECK(p.Conflicts().empty());
}

TEST_CASE("apply_command: --resume is given with or without a RUN, and only when on the line") {
  ParsedApply bare({"--resume"});
  CHECK(bare.a.resume);
  CHECK(bare.a.resume_run.empty());
  ParsedApply run({"--resume", "20261130-220000-4f2a"});
  CHECK(run.a.resume);
  CHECK(run.a.resume_run == "20261130-220000-4f2a");
  ParsedApply none({"--ref", "main"});
  CHECK_FALSE(none.a.resume);
  CHECK(none.a.given == std::set<std::string>{"--ref"});
}

TEST_CASE("apply_command: the given flags are what ApplyFlagConflicts judges") {
  // A conflicting pair is reported...
  CHECK(AnyConflictSays(ParsedApply({"--reboot-grace", "30"}).Conflicts(), "--reboot-grace only matters"));
  CHECK(AnyConflictSays(ParsedApply({"--force-unlock", "R", "--ref", "main"}).Conflicts(),
               "--ref does nothing with --force-unlock"));
  CHECK(AnyConflictSays(ParsedApply({"plan.json", "--retry-failed", "R"}).Conflicts(), "takes no plan file"));
  CHECK(AnyConflictSays(ParsedApply({"--resume", "--limit", "gpu1"}).Conflicts(),
               "--limit does nothing with --resume"));
  // ...a valid one is not, a flag left at its default is not "given".
  CHECK(ParsedApply({"--resume", "--reboot-grace", "30"}).Conflicts().empty());
  CHECK(ParsedApply({"--force-unlock", "R", "--journal", "j.db", "--dead-owner", "h:1"}).Conflicts().empty());
  CHECK(ParsedApply(std::vector<std::string>{}).a.given.empty());
}

TEST_CASE("apply_command: --format takes text or json; defaults are shown") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  plans::ApplyFlags a;
  const cli::ApplyCommand c = cli::AddApplyCommand(app, g, a);
  CHECK_THROWS_AS(ParseArgs(app, {"apply", "--format", "yaml"}), CLI::ValidationError);
  CHECK(c.sub->get_option("--lock-ttl")->get_default_str() == "10m");
  CHECK(c.sub->get_option("--reboot-timeout")->get_default_str() == "900");
  CHECK(c.sub->get_footer().find("plumb apply --force-unlock RUN") != std::string::npos);
}
