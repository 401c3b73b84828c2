#pragma once
/// The watch's memory of each node's verdict, and the events a new verdict makes against it.
/// Pure: verdicts in (report::DriftNode, as `plumb drift` makes them), events out.
///
/// Rules (README "Watching drift"):
///   - a key that becomes `drift`, or whose live or pinned value changes while it is drifted,
///     is a `drift` event; a drifted key that is now in sync, waived, not checked or no longer
///     pinned is `drift_cleared` (reason in_sync, waived, unchecked, unpinned);
///   - a node that cannot be read is `node_unreadable` (when first seen so, when it was readable,
///     or when the reason changes); its drift is then unknown, not cleared: the keys keep their
///     last verdict, and when the node is read again (`node_readable`) only what changed since
///     is an event;
///   - a node's first verdict reports the drift it already has (the watch knew nothing before).
#include <map>
#include <string>
#include <vector>

#include "plans/report/drift.h"
#include "plans/watch/watch_event.h"

namespace plumb::plans::watch {

class DriftTracker {
 public:
  /// What every event of one update carries.
  struct Context {
    std::string time, cluster, commit;
  };

  /// Compares `verdict` with the node's last one, remembers it, and returns the events.
  std::vector<WatchEvent> Update(report::DriftNode verdict, const Context& cx);
  /// Drops a node (no longer in the inventory, or left out by --limit).
  void Forget(const std::string& node);

  /// The latest verdict of every node as one drift report (nodes by name; an unreadable
  /// node's has no checks), its counts and verdict up to date: what the metrics render.
  /// `source`, `cluster` and `created_at` are the caller's to set.
  report::DriftReport& Report();
  /// The latest verdict of `node`, or null.
  const report::DriftNode* Find(const std::string& node) const;

 private:
  report::DriftNode* Slot(const std::string& node);   ///< existing, or null

  report::DriftReport report_;   ///< nodes kept sorted by name
  /// Checks of the last readable verdict of nodes that are unreadable now.
  std::map<std::string, std::vector<report::DriftCheck>> last_known_;
};

}  // namespace plumb::plans::watch
