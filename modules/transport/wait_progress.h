#pragma once
/// WaitProgress: where a long BMC wait stands (a firmware task, a power state), reported after
/// every look so the caller can show progress on a TTY, a heartbeat line in a log, or a note in
/// the journal. Never holds a secret: links and states only.
#include <chrono>
#include <string>

namespace plumb::transport {

struct WaitProgress {
  enum class Kind { kTask, kPower };
  Kind kind = Kind::kTask;
  std::string node;     ///< the plumb node the BMC serves ("" when not known)
  std::string what;     ///< "task /redfish/v1/TaskService/Tasks/7", "PowerState On"
  std::string state;    ///< TaskState / PowerState at the last look ("" before the first answer)
  int percent = -1;     ///< the task's PercentComplete when the BMC gives one, else -1
  std::chrono::milliseconds waited{0};
  std::chrono::milliseconds limit{0};   ///< when the wait gives up (the task or power timeout)

  /// "task /redfish/v1/TaskService/Tasks/7: Running 42% (1m30s of 45m)"
  std::string Text() const;
};

/// "45m", "1m30s", "12s", "1h5m": how plumb writes a wait's length in messages.
std::string DurationText(std::chrono::milliseconds d);

}  // namespace plumb::transport
