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

}  // namespace plumb::cmd
