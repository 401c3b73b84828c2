#pragma once
/// What `plumb watch` tells its readers: one event per change it sees, as one JSON line each
/// (README "Watching drift"). Events are values; where they go is an EventSink (a file or stdout
/// in the real run, a vector in tests).
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "schemas/result.h"

namespace plumb::plans::watch {

enum class EventKind {
  kDrift,            ///< a key left its pinned value (or its live value changed while drifted)
  kDriftCleared,     ///< a drifted key is back in sync, waived, or no longer pinned
  kNodeUnreadable,   ///< the node could not be read (first seen so, or was readable before)
  kNodeReadable,     ///< a node that could not be read is read again
  kNodeRebooted,     ///< the node's boot id changed since it was last read
  kDesiredChanged,   ///< --ref now names another commit (or SIGHUP): the desired state reloaded
  kDesiredError,     ///< the commit --ref now names does not load; the last good one stays
};
/// "drift", "drift_cleared", "node_unreadable", "node_readable", "node_rebooted",
/// "desired_changed", "desired_error": the `event` field.
const char* EventKindName(EventKind k);

/// One event. Empty strings and null values are left out of the JSON line.
struct WatchEvent {
  EventKind kind = EventKind::kDrift;
  std::string time;        ///< RFC 3339 UTC, when plumb saw it
  std::string cluster;
  std::string node;        ///< "" for desired_* events
  std::string key;         ///< drift events: "sysctl.vm.swappiness"
  std::string member;      ///< drift events: the member of the key ("mlx5_0 port 1"), if any
  nlohmann::json live;     ///< drift: the live value (null when absent on the node)
  nlohmann::json desired;  ///< drift: the pinned value
  std::string commit;      ///< the desired state's commit the verdict is against
  std::string reason;      ///< drift: repair | intent; drift_cleared: in_sync | waived | unpinned;
                           ///< node_unreadable: the error
  /// drift: why it differs when the values do not say ("nvidia-driver-550 is not (fully)
  /// installed" beside 550.90.07 -> 550.90.07)
  std::string why;
  std::string origin;      ///< drift: where the pin is written ("stacks/h100.yaml:7:12")
  std::string previous;    ///< node_rebooted: the old boot id; desired_changed: the old commit
  std::string boot_id;     ///< node_rebooted: the new boot id

  /// Fields in a fixed order (time, event, cluster, node, key, member, ...): what a reader
  /// scans first.
  nlohmann::ordered_json ToJson() const;
};

/// Where events go. Emit is called from one thread at a time.
class EventSink {
 public:
  virtual ~EventSink() = default;
  /// An error means the event could not be written (a closed pipe, a full disk).
  virtual Status Emit(const WatchEvent& e) = 0;
};

/// One JSON object per line on `out` (stdout, or a file opened for appending), flushed after
/// each line so a reader following the file sees every event as it happens.
class JsonLinesSink final : public EventSink {
 public:
  explicit JsonLinesSink(std::FILE* out, std::string name) : out_(out), name_(std::move(name)) {}
  Status Emit(const WatchEvent& e) override;

 private:
  std::FILE* out_;
  std::string name_;   ///< for the error message: "stdout", the file's path
};

}  // namespace plumb::plans::watch
