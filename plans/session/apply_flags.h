#pragma once
/// `plumb apply`'s flags as parsed (`plumb bmc apply` fills the same), and the ApplyRequest
/// they make once their values are checked: the durations, the lock's bounds, the refusal of
/// --working-tree. Tested in tests/plans/session/apply_flags_test.cc.
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "plans/session/apply_session.h"
#include "plans/store/run_who.h"
#include "schemas/result.h"

namespace plumb::plans {

struct ApplyFlags {
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
  std::set<std::string> given;   ///< the flags on the command line, for the conflict rules
};

/// The global flags apply reads: where the repo is and what to read of it.
struct ApplySource {
  std::string repo = ".";
  std::string ref;
  bool working_tree = false;
  bool json = false;   ///< --format json
};

/// The flags as the session takes them (the owner left for the caller to add); an error for a
/// value no flag allows (--working-tree, a --lock-ttl outside 10s..24h). PLUMB_HEARTBEAT_S from
/// `env` (tests: a lock beat in seconds).
Result<ApplyRequest> ApplyRequestOf(const ApplyFlags& a, const ApplySource& s, const EnvLookup& env);

/// This process as the owner of the lock and the run: host, pid and its start, the OS user, and
/// the run's who (CI variables of `env`, the approver: `approved_by` or $PLUMB_APPROVED_BY).
void SetRunOwner(ApplyRequest& r, int64_t pid, const EnvLookup& env, const std::string& approved_by);

/// A BMC wait's flag (--task-timeout, --power-timeout): a positive duration ("45m", "90s"), or
/// an error (cli.duration) naming the flag and its value.
Result<std::chrono::milliseconds> BmcWaitFlag(const char* flag, const std::string& value);

/// --task-timeout and --power-timeout, each a positive duration; the first that is not one is
/// refused (BmcWaitFlag). One reading for plumb apply, bmc apply and the other bmc verbs.
struct BmcWaits {
  std::chrono::milliseconds task, power;
};
Result<BmcWaits> ParseBmcWaits(const std::string& task_timeout, const std::string& power_timeout);
inline Result<BmcWaits> BmcWaitsOf(const ApplyFlags& a) {
  return ParseBmcWaits(a.task_timeout, a.power_timeout);
}

}  // namespace plumb::plans
