#pragma once
/// The watch's metrics as Prometheus text (exposition format 0.0.4): what `/metrics` serves and
/// what --textfile writes for node_exporter's textfile collector. The drift families are `plumb
/// drift --format prom`'s own (report::DriftToProm); the watch adds its own families after them.
#include <map>
#include <string>

#include "plans/report/drift.h"
#include "plans/watch/watch_event.h"

namespace plumb::plans::watch {

/// What the watch counts besides the verdicts.
struct WatchStats {
  size_t nodes = 0;                     ///< nodes watched
  unsigned long long rounds = 0;        ///< complete rounds
  double last_round_seconds = -1;       ///< the last complete round's wall time; < 0: none yet
  long long last_round_end_unix = 0;    ///< when it ended
  std::map<std::string, long long> last_seen_unix;   ///< node -> last time it was read
  std::map<EventKind, unsigned long long> events;    ///< events emitted, by kind
};

/// `report` (counts and verdict up to date) and `stats` as Prometheus text: the drift families
/// of report::DriftToProm, then
///   plumb_watch_key_drift{cluster,node,key}            1 unwaived drift, 0 in sync or waived
///                                                      (every checked key of every read node)
///   plumb_watch_nodes{cluster}                         nodes watched
///   plumb_watch_unreadable_nodes{cluster}              nodes whose last read failed
///   plumb_watch_last_seen_timestamp_seconds{cluster,node}   last successful read
///   plumb_watch_round_duration_seconds{cluster}        the last complete round's wall time
///   plumb_watch_rounds_total{cluster}                  complete rounds (counter)
///   plumb_watch_events_total{cluster,event}            events emitted (counter)
std::string RenderMetrics(const report::DriftReport& report, const WatchStats& stats);

}  // namespace plumb::plans::watch
