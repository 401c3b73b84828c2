#pragma once
/// `plumb apply`'s run, for the verbs that change nodes: `plumb apply` itself and `plumb bmc
/// apply` (a plan of the Redfish modules only). There is one door to a node: every change goes
/// through this run (plan, lock, lease, drain, change, verify, return), whatever the verb.
#include "cmd/command.h"
#include "plans/session/apply_flags.h"

namespace plumb::cmd {

/// The flags (plans/session/apply_flags.h).
using ApplyArgs = plans::ApplyFlags;

/// Runs `plumb apply` with `a`; returns the exit code (the apply rows of the table).
int RunApply(const GlobalOptions& g, const ApplyArgs& a);

/// The flags whose presence apply's conflict rules see.
using ApplyOptions = std::vector<CLI::Option*>;
/// apply's flags that `plumb bmc apply` takes too, with the same help: --store/--journal;
/// the run's record (--trust-policy-from, --approved-by, --plan-out); how long things may take
/// and how the run is shown (--reboot-timeout ... --lock-ttl, --format).
void AddStoreFlag(CLI::App* sub, ApplyArgs* a, ApplyOptions& opts);
void AddRecordFlags(CLI::App* sub, ApplyArgs* a, ApplyOptions& opts);
void AddTimingFlags(CLI::App* sub, GlobalOptions& g, ApplyArgs* a, ApplyOptions& opts);

}  // namespace plumb::cmd
