#pragma once
/// The command lines of the verbs that only read the journal: `plumb runs`, `plumb history`,
/// `plumb audit export`: descriptions, flags, help, examples, and history's flag checks,
/// filling plans/report/journal_commands.h's requests. cmd/runs.cc, history.cc and audit.cc
/// run what they parsed. Tested in tests/cli/journal_commands_test.cc.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/global_options.h"
#include "plans/report/journal_commands.h"

namespace plumb::cli {

struct RunsArgs {
  plans::report::RunsRequest req;
  std::string old_limit;   ///< --limit: refused with a pointer to --last
};

/// Adds `plumb runs` to `app`, filling `g` (--format) and `a`. The callback is the caller's.
CLI::App* AddRunsCommand(CLI::App& app, GlobalOptions& g, RunsArgs& a);

struct HistoryArgs {
  plans::report::HistoryRequest req;
  std::string old_limit;   ///< --limit: refused with a pointer to --last
};

/// Adds `plumb history` to `app`, filling `g` (--format) and `a`. The callback is the caller's.
CLI::App* AddHistoryCommand(CLI::App& app, GlobalOptions& g, HistoryArgs& a);

/// history's flags that do not go together: --anchor without --verify, --verify with a node.
/// The error (for stderr after "plumb history: "), or nullopt when they go together.
std::optional<std::string> HistoryFlagConflict(const HistoryArgs& a);

/// Adds `plumb audit` and its one verb, `export`, to `app`, filling `a` (its own --format:
/// json | html). Returns `audit export`; its callback is the caller's.
CLI::App* AddAuditCommand(CLI::App& app, plans::report::AuditRequest& a);

}  // namespace plumb::cli
