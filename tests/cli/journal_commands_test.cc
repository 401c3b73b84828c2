// The command lines of runs, history and audit export (cli/journal_commands.h), and history's
// flags that do not go together.
#include <doctest/doctest.h>

#include <string>

#include <CLI/CLI.hpp>

#include "cli/journal_commands.h"
#include "cli/parse_args.h"

using namespace plumb;
using cli::testing::ParseArgs;

TEST_CASE("journal_commands: runs takes a run, the store, --last, --format; --limit is kept for its refusal") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::RunsArgs a;
  cli::AddRunsCommand(app, g, a);
  ParseArgs(app, {"runs", "20261130-220000-4f2a", "--journal", "j.db", "--last", "5", "--format",
                  "json", "--limit", "7"});
  CHECK(a.req.run == "20261130-220000-4f2a");
  CHECK(a.req.store == "j.db");
  CHECK(a.req.last == 5);
  CHECK(g.format == "json");
  CHECK(a.old_limit == "7");
}

TEST_CASE("journal_commands: history's flags land in its request; --anchor needs --verify, --verify no node") {
  CLI::App app{"t", "plumb"};
  cli::GlobalOptions g;
  cli::HistoryArgs a;
  cli::AddHistoryCommand(app, g, a);
  ParseArgs(app, {"history", "--verify", "--anchor", "sha256:ab", "--store", "s.db", "--last", "9"});
  CHECK(a.req.verify);
  CHECK(a.req.anchor == "sha256:ab");
  CHECK(a.req.store == "s.db");
  CHECK(a.req.last == 9);
  CHECK_FALSE(cli::HistoryFlagConflict(a).has_value());

  cli::HistoryArgs anchor_alone;
  anchor_alone.req.anchor = "sha256:ab";
  REQUIRE(cli::HistoryFlagConflict(anchor_alone).has_value());
  CHECK(cli::HistoryFlagConflict(anchor_alone)->find("give it with --verify") != std::string::npos);
  cli::HistoryArgs verify_node;
  verify_node.req.verify = true;
  verify_node.req.node = "gpu001";
  REQUIRE(cli::HistoryFlagConflict(verify_node).has_value());
  CHECK(cli::HistoryFlagConflict(verify_node)->find("it takes no node") != std::string::npos);
  cli::HistoryArgs node_only;
  node_only.req.node = "gpu001";
  CHECK_FALSE(cli::HistoryFlagConflict(node_only).has_value());
}

TEST_CASE("journal_commands: audit export needs --since and takes json or html") {
  CLI::App app{"t", "plumb"};
  plans::report::AuditRequest a;
  CLI::App* sub = cli::AddAuditCommand(app, a);
  CHECK(sub->get_name() == "export");
  ParseArgs(app, {"audit", "export", "--since", "2026-01-01", "--format", "html", "--out",
                  "audit.html", "--journal", "j.db"});
  CHECK(a.since == "2026-01-01");
  CHECK(a.format == "html");
  CHECK(a.file == "audit.html");
  CHECK(a.store == "j.db");
  CLI::App no_since{"t", "plumb"};
  plans::report::AuditRequest b;
  cli::AddAuditCommand(no_since, b);
  CHECK_THROWS_AS(ParseArgs(no_since, {"audit", "export", "--format", "json"}), CLI::RequiredError);
  CLI::App text{"t", "plumb"};
  plans::report::AuditRequest c;
  cli::AddAuditCommand(text, c);
  CHECK_THROWS_AS(ParseArgs(text, {"audit", "export", "--since", "2026-01-01", "--format", "text"}),
                  CLI::ValidationError);
}
