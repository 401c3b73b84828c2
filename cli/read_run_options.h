#pragma once
/// The flags of the read-only run plan, drift, acceptance and apply's plan-now share (load the
/// repo, read the nodes or a facts snapshot, plan; cmd/read_run.h runs it). Tested in
/// tests/cli/read_run_commands_test.cc.
#include <string>

#include <CLI/CLI.hpp>

#include "plans/report/read_run.h"

namespace plumb::cli {

/// The run's own options (--limit, --facts, --max-facts-age, --fanout, --no-bmc; only_modules
/// for `plumb bmc apply`) and what cmd/ decides around it.
struct ReadRunArgs {
  plans::report::ReadRunOptions run;
  bool accept_new_host_keys = false;
  bool read_scheduler = true; ///< plan: yes (max_unavailable, blocking jobs); drift: no
  bool no_scheduler = false;  ///< --no-scheduler: plan without Slurm's view (says so)
  /// plan, apply: judge the commit by the signed-commit policy of its trusted base
  /// (plans/trust/commit_trust.h) before any node is read; drift reports on any commit.
  bool check_trust = false;
  std::string trust_from;     ///< --trust-policy-from REF ("" = the commit's first parent)
};

/// Adds --limit, --facts, --max-facts-age, --fanout, --no-bmc, --accept-new-host-keys to `sub`.
void AddReadRunOptions(CLI::App& sub, ReadRunArgs& a);

/// Adds --trust-policy-from to `sub` (plan; apply has its own help for it).
void AddTrustOption(CLI::App& sub, std::string& trust_from);

}  // namespace plumb::cli
