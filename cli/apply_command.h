#pragma once
/// `plumb apply`'s command line: its description, flags, help and examples, filling
/// plans::ApplyFlags; and the flags `plumb bmc apply` shares with it. cmd/apply.cc runs what it
/// parsed. Tested in tests/cli/apply_command_test.cc.
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/global_options.h"
#include "plans/session/apply_flags.h"

namespace plumb::cli {

/// The options whose presence apply's conflict rules see (plans::ApplyFlagConflicts).
using RuledOptions = std::vector<CLI::Option*>;

/// `plumb apply` as added to the command line.
struct ApplyCommand {
  CLI::App* sub = nullptr;
  RuledOptions ruled;               ///< every flag of apply: all take part in the rules
  CLI::Option* resume = nullptr;    ///< --resume: its count says given, with or without a RUN
};

/// Adds `plumb apply` to `app`, its flags filling `g` (--repo, --ref, --working-tree, --format)
/// and `a`; once parsed, `a.resume` and `a.given` say what was given.
/// The callback is the caller's (it runs apply).
ApplyCommand AddApplyCommand(CLI::App& app, GlobalOptions& g, plans::ApplyFlags& a);

/// Adds the name of each option of `ruled` that was given to `given`.
void NoteGiven(const RuledOptions& ruled, std::set<std::string>& given);

/// apply's flags that `plumb bmc apply` takes too, with the same help, each appended to
/// `ruled`: --store/--journal; the run's record (--trust-policy-from, --approved-by,
/// --plan-out); how long things may take and how the run is shown (--reboot-timeout ...
/// --lock-ttl, --format into `g`).
void AddApplyStoreFlag(CLI::App& sub, plans::ApplyFlags& a, RuledOptions& ruled);
void AddApplyRecordFlags(CLI::App& sub, plans::ApplyFlags& a, RuledOptions& ruled);
void AddApplyTimingFlags(CLI::App& sub, GlobalOptions& g, plans::ApplyFlags& a,
                         RuledOptions& ruled);

}  // namespace plumb::cli
