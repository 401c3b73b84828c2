#include "modules/transport/bmc.h"

namespace plumb::transport {

std::string TaskOutcome::EndText() const {
  std::string which = !task_link.empty() ? "task " + task_link
                      : !monitor.empty() ? "task " + monitor
                                         : std::string("the request");
  std::string http = http_status ? " (HTTP " + std::to_string(http_status) + ")" : "";
  if (!Known()) return "the end of " + which + " is unknown: " + unknown;
  if (!had_task) return which + " was answered at once" + http;
  std::string s = which + " ended " + (state.empty() ? "without a TaskState" : state);
  if (!task_status.empty()) s += ", TaskStatus " + task_status;
  return s + http;
}

}  // namespace plumb::transport
