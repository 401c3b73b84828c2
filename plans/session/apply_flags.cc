#include "plans/session/apply_flags.h"

#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "inventory/version.h"
#include "plans/core/process_identity.h"

namespace plumb::plans {
namespace {

// The --lock-ttl bounds: long enough that a renewal (every ttl/5) survives a slow store, short
// enough that a lock a dead runner left behind is not a day's outage.
constexpr long kMinLockTtlS = 10, kMaxLockTtlS = 24 * 3600;

}  // namespace

Result<ApplyRequest> ApplyRequestOf(const ApplyFlags& a, const ApplySource& s, const EnvLookup& env) {
  if (s.working_tree)
    return Diagnostic::Error("apply.working-tree",
                             "apply never reads uncommitted files; commit them first");
  const std::optional<long> ttl_s = inventory::ParseDuration(a.lock_ttl);
  if (!ttl_s || *ttl_s < kMinLockTtlS || *ttl_s > kMaxLockTtlS)
    return Diagnostic::Error(
        "apply.lock-ttl", fmt::format("--lock-ttl {}: not a duration from 10s to 24h", a.lock_ttl), {},
        {}, "like --lock-ttl 10m (the default) or --lock-ttl 90s");
  ApplyRequest r;
  r.plan_file = a.plan_file;
  r.resume = a.resume;
  r.resume_run = a.resume_run;
  r.retry_failed = a.retry_failed;
  r.force_unlock = a.force_unlock;
  r.dead_owner = a.dead_owner;
  r.limit = a.limit;
  r.repo = s.repo;
  r.ref = s.ref;
  r.repo_given = a.given.count("--repo") > 0;
  r.ref_given = a.given.count("--ref") > 0;
  r.auto_approve = a.auto_approve;
  r.json = s.json;
  r.plan_out = a.plan_out;
  r.trust_from = a.trust_from;
  r.lock_ttl = std::chrono::seconds(*ttl_s);
  r.timing.reboot_timeout = std::chrono::seconds(a.reboot_timeout_s);
  r.timing.reboot_grace = std::chrono::seconds(a.reboot_grace_s);
  r.timing.poll_max = std::chrono::milliseconds(a.poll_max_ms);
  if (const char* hb = env("PLUMB_HEARTBEAT_S"); hb && std::atoi(hb) > 0)
    r.timing.heartbeat = std::chrono::seconds(std::atoi(hb));   // tests: a beat in seconds
  return r;
}

void SetRunOwner(ApplyRequest& r, int64_t pid, const EnvLookup& env, const std::string& approved_by) {
  r.host = HostName();
  r.pid = pid;
  r.process_start = ProcessStart(pid);
  r.user = UserName();
  r.who = WhoFromEnvironment(env, r.user, approved_by);
}

Result<std::chrono::milliseconds> BmcWaitFlag(const char* flag, const std::string& value) {
  auto s = inventory::ParseDuration(value);
  if (!s || *s <= 0)
    return Diagnostic::Error("cli.duration", std::string(flag) + " " + value + ": not a duration",
                             {}, {}, "like 45m, 90s or 1h");
  return std::chrono::milliseconds(*s * 1000);
}

Result<BmcWaits> ParseBmcWaits(const std::string& task_timeout, const std::string& power_timeout) {
  auto task = BmcWaitFlag("--task-timeout", task_timeout);
  if (!task.ok()) return task.error();
  auto power = BmcWaitFlag("--power-timeout", power_timeout);
  if (!power.ok()) return power.error();
  return BmcWaits{*task, *power};
}

}  // namespace plumb::plans
