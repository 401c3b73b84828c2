#pragma once
/// `plumb apply`'s run, for the verbs that change nodes: `plumb apply` itself and `plumb bmc
/// apply` (a plan of the Redfish modules only). There is one door to a node: every change goes
/// through this run (plan, lock, lease, drain, change, verify, return), whatever the verb.
#include <set>
#include <string>
#include <vector>

#include "cmd/command.h"

namespace plumb::cmd {

struct ApplyArgs {
  std::string plan_file;
  bool auto_approve = false;
  bool resume = false;
  std::string resume_run;
  std::string retry_failed;
  std::string journal;
  std::string force_unlock;
  std::string dead_owner;
  std::string limit;
  int reboot_timeout_s = 900;
  std::string task_timeout = "45m";    ///< --task-timeout: a firmware update's task
  std::string power_timeout = "5m";    ///< --power-timeout: a BMC reset's power state
  int poll_max_ms = 5000;
  int reboot_grace_s = 60;
  std::string plan_out;
  std::string trust_from;    ///< --trust-policy-from
  std::string approved_by;   ///< --approved-by
  std::string lock_ttl = "10m";   ///< --lock-ttl: how long the cluster lock outlives a silent holder
  /// Plan (now) only these modules' changes: `plumb bmc apply` gives firmware, bios, power.
  std::vector<std::string> only_modules;
  std::string verb = "apply";   ///< how messages name the command ("apply", "bmc apply")
  std::set<std::string> given;   ///< the flags on the command line, for the conflict rules
};

/// Runs `plumb apply` with `a`; returns the exit code (the apply rows of the table).
int RunApply(const GlobalOptions& g, const ApplyArgs& a);

}  // namespace plumb::cmd
