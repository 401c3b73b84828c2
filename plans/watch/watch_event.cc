#include "plans/watch/watch_event.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace plumb::plans::watch {

const char* EventKindName(EventKind k) {
  switch (k) {
    case EventKind::kDrift: return "drift";
    case EventKind::kDriftCleared: return "drift_cleared";
    case EventKind::kNodeUnreadable: return "node_unreadable";
    case EventKind::kNodeReadable: return "node_readable";
    case EventKind::kNodeRebooted: return "node_rebooted";
    case EventKind::kDesiredChanged: return "desired_changed";
    case EventKind::kDesiredError: return "desired_error";
  }
  return "drift";
}

nlohmann::ordered_json WatchEvent::ToJson() const {
  nlohmann::ordered_json j;
  j["time"] = time;
  j["event"] = EventKindName(kind);
  auto put = [&j](const char* k, const std::string& v) {
    if (!v.empty()) j[k] = v;
  };
  put("cluster", cluster);
  put("node", node);
  put("key", key);
  put("member", member);
  if (kind == EventKind::kDrift || kind == EventKind::kDriftCleared) {
    j["live"] = live;   // null is meaningful here: the key is absent on the node
    j["desired"] = desired;
  }
  put("commit", commit);
  put("reason", reason);
  put("why", why);
  put("origin", origin);
  put("previous", previous);
  put("boot_id", boot_id);
  return j;
}

Status JsonLinesSink::Emit(const WatchEvent& e) {
  // Invalid UTF-8 from a node (a garbled tool) is replaced, never a throw mid-watch.
  std::string text =
      e.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), out_) != text.size() || std::fflush(out_) != 0)
    return Diagnostic::Error("watch.events", fmt::format("cannot write events to {}: {}", name_,
                                                         errno ? std::strerror(errno) : "error"));
  return OkStatus();
}

}  // namespace plumb::plans::watch
