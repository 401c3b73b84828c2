#include "plans/store/apply_lock.h"

#include <fmt/format.h>

#include "plans/core/process_identity.h"

namespace plumb::plans {

Status TakeClusterLock(Journal& journal, const LockInfo& want, const std::string& now,
                       std::vector<std::string>* notes) {
  LockInfo held;
  auto got = journal.AcquireLock(want, now, &held);
  if (got && !*got && held.run == want.run && held.owner_host == want.owner_host &&
      !OwnerAlive(held.owner_pid, held.owner_start)) {
    // This run's previous process died (a crash, kill -9) holding the lock: --resume takes over.
    if (notes)
      notes->push_back(fmt::format("run {}'s previous process (pid {}) is gone; taking over its "
                                   "lock", want.run, held.owner_pid));
    if (Status s = journal.ForceUnlock(held.run); !s) return s;
    got = journal.AcquireLock(want, now, &held);
  }
  if (!got) return got.error();
  if (*got) return OkStatus();
  return Diagnostic::Error(
      "apply.locked",
      fmt::format("cluster {} is locked by run {} (host {}, pid {}) since {}, until {}",
                  held.cluster, held.run, held.owner_host, held.owner_pid, held.since, held.expires),
      {}, {},
      held.owner_host == want.owner_host
          ? fmt::format("wait for it to finish; if its process is gone: plumb apply "
                        "--force-unlock {}", held.run)
          : fmt::format("wait for it to finish (or for the lock to expire); if you know it is "
                        "dead: plumb apply --force-unlock {} --dead-owner {}:{}",
                        held.run, held.owner_host, held.owner_pid));
}

Result<LockInfo> ForceUnlockChecked(Journal& journal, const std::string& run,
                                    const std::string& dead_owner, const std::string& now,
                                    const std::string& this_host) {
  auto lock = journal.LockOfRun(run);
  if (!lock) return lock.error();
  if (!*lock)
    return Diagnostic::Error("apply.no-lock", fmt::format("run {} holds no lock", run), {}, {},
                             "plumb runs shows which runs are running");
  const LockInfo l = **lock;
  const std::string owner = fmt::format("{}:{}", l.owner_host, l.owner_pid);
  if (l.owner_host == this_host) {
    if (OwnerAlive(l.owner_pid, l.owner_start))
      return Diagnostic::Error(
          "apply.unlock-live",
          fmt::format("run {} is still running here (pid {}, host {}): its lock is not released",
                      run, l.owner_pid, l.owner_host),
          {}, {},
          fmt::format("stop it with Ctrl-C (kill -INT {}); it releases the lock itself, and "
                      "plumb apply --resume {} continues it", l.owner_pid, run));
  } else if (l.expires > now && dead_owner != owner) {
    return Diagnostic::Error(
        "apply.unlock-remote",
        fmt::format("run {} holds the lock from host {} (pid {}) until {}; plumb cannot see that "
                    "host's processes", run, l.owner_host, l.owner_pid, l.expires),
        {}, {},
        dead_owner.empty()
            ? fmt::format("wait until {} (a live run renews it), or, if you know that process is "
                          "dead: plumb apply --force-unlock {} --dead-owner {}", l.expires, run, owner)
            : fmt::format("--dead-owner must name the owner exactly: {}", owner));
  }
  if (Status s = journal.ForceUnlock(run); !s) return s.error();
  return l;
}

}  // namespace plumb::plans
