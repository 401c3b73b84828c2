#pragma once
/// Who a process is, beyond its pid: a lock or lease names its owner by host, pid and start
/// time, so a pid the kernel gave to another program after the owner died is not taken for it.
#include <cstdint>
#include <string>

namespace plumb::plans {

/// "<boot id>/<start time in clock ticks>" of `pid` on this host (from /proc), "" when it is not
/// running or cannot be read. Stable for the life of the process, unique across reboots.
std::string ProcessStart(int64_t pid);

/// This host's name.
std::string HostName();
/// The user this process runs as ("root"), from the password database or $USER.
std::string UserName();

/// Is the owner `pid` (started at `start`, when known) still running on this host? A pid that
/// runs but started at another time is a different process: not alive. EPERM counts as alive.
bool OwnerAlive(int64_t pid, const std::string& start);

}  // namespace plumb::plans
