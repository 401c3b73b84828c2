#pragma once
/// The cluster lock as apply takes and breaks it (one apply per cluster per journal; node
/// leases, plans/rollout/node_lease.h, protect each node whatever the lock says).
#include <string>
#include <vector>

#include "plans/store/journal.h"
#include "schemas/result.h"

namespace plumb::plans {

/// Takes the lock for `want` at `now`. When the holder is this very run's earlier process and
/// it is gone from this host (a crash, kill -9), `--resume` takes the lock over; a note saying
/// so goes to `notes`. Any other unexpired holder is refused ("apply.locked"), naming it.
Status TakeClusterLock(Journal& journal, const LockInfo& want, const std::string& now,
                       std::vector<std::string>* notes);

/// `plumb apply --force-unlock RUN [--dead-owner HOST:PID]`. Releases RUN's lock only when its
/// owner cannot be running it any more:
///   - owner on this host: its process is gone (pid not running, or running since another
///     start time); a live owner is refused, whatever the user says;
///   - owner on another host (whose processes plumb cannot see): the lock has expired, or the
///     user names the owner exactly (`dead_owner` = "HOST:PID") to confirm it is dead.
/// Returns what was released, for the message.
Result<LockInfo> ForceUnlockChecked(Journal& journal, const std::string& run,
                                    const std::string& dead_owner, const std::string& now,
                                    const std::string& this_host);

}  // namespace plumb::plans
