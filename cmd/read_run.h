#pragma once
/// The read-only run shared by `plumb plan` and `plumb drift`: load the cluster repo, read the
/// live state (gather over SSH, or a recorded facts snapshot with --facts), read the scheduler
/// (plan only), load the desired state at the nodes' marker commits, and plan. Nothing here
/// writes to a node.
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "cli/read_run_options.h"
#include "cmd/command.h"
#include "cmd/gather_support.h"
#include "inventory/load.h"
#include "plans/observe/observed.h"
#include "plans/core/command_output.h"
#include "plans/observe/plan_run.h"
#include "plans/report/drift.h"
#include "plans/report/read_run.h"
#include "plans/trust/commit_trust.h"

namespace plumb::cmd {

/// The flags (cli/read_run_options.h).
using ReadRunArgs = cli::ReadRunArgs;

/// A read run, and what cmd/ adds to it: the commit's signature as the policy judged it
/// (check_trust on a commit; else nullopt).
struct ReadRun : plans::report::ReadRunResult {
  std::optional<plans::CommitTrust> trust;
};

/// Judges `commit` of `repo` by the signed-commit policy of its trusted base, with ssh-keygen
/// and gpg on this host. An error (code trust.*) refuses the commit.
Result<plans::CommitTrust> CheckTrust(const std::string& repo, const std::string& commit,
                                      const std::string& trust_from);

/// plans::report::ReadAndPlan over the real world: the repo on disk, SSH, the BMCs, the
/// schedulers' CLIs. On an error that leaves nothing to plan (bad repo, bad --limit,
/// unreadable snapshot) returns the diagnostics to print, and the caller exits 1.
Result<std::unique_ptr<ReadRun>> DoReadRun(const GlobalOptions& g, const ReadRunArgs& a);

/// DoReadRun, then `show` of the run (kept until the process exits: freeing it is slow); a run
/// that failed is said on stderr and exits with `verb`'s error code.
int ShowReadRun(std::string_view verb, const GlobalOptions& g, const ReadRunArgs& a,
                const std::function<int(ReadRun&)>& show);

/// The drift report of a read run (for `plumb drift` and `plumb acceptance`).
using plans::report::DriftReportOf;

/// Writes `text` to `path` (atomically: temp file + rename), or to stdout when `path` is empty.
Status WriteOutput(const std::string& path, const std::string& text);

}  // namespace plumb::cmd
