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

Result<BmcWaits> BmcWaitsOf(const ApplyFlags& a) {
  const std::optional<long> task_s = inventory::ParseDuration(a.task_timeout);
  const std::optional<long> power_s = inventory::ParseDuration(a.power_timeout);
  if (!task_s || *task_s <= 0 || !power_s || *power_s <= 0)
    return Diagnostic::Error(
        "apply.wait-timeout",
        fmt::format("--task-timeout {} / --power-timeout {}: not a duration", a.task_timeout,
                    a.power_timeout),
        {}, {}, "like --task-timeout 45m (the default) or --power-timeout 90s");
  return BmcWaits{std::chrono::seconds(*task_s), std::chrono::seconds(*power_s)};
}

}  // namespace plumb::plans
