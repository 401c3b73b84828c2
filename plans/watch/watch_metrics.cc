#include "plans/watch/watch_metrics.h"

#include <map>

#include <fmt/format.h>

#include "plans/report/drift_render.h"

namespace plumb::plans::watch {
namespace {

void Family(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

std::string RenderMetrics(const report::DriftReport& r, const WatchStats& s) {
  using report::DriftStatus;
  using report::PromLabelValue;
  report::RenderOptions ro;
  ro.now_unix = s.last_round_end_unix;
  std::string out = report::DriftToProm(r, ro);
  const std::string cluster = PromLabelValue(r.cluster);

  Family(out, "plumb_watch_key_drift", "gauge",
         "1 when a pinned key of a node has unwaived drift, 0 when it is in sync or waived.");
  for (const report::DriftNode& n : r.nodes) {
    if (!n.readable) continue;   // unknown, not in sync: no sample (plumb_node_readable says 0)
    const std::string node = PromLabelValue(n.node);
    // A key with several members off its pin (InfiniBand ports) has a row each: one series per
    // key, 1 when any of them drifts (the events name the members).
    std::map<std::string, int> keys;
    for (const report::DriftCheck& c : n.checks) {
      if (c.status == DriftStatus::kUnchecked) continue;
      keys[c.key()] |= c.status == DriftStatus::kDrift ? 1 : 0;
    }
    for (const auto& [key, drift] : keys)
      out += fmt::format("plumb_watch_key_drift{{cluster=\"{}\",node=\"{}\",key=\"{}\"}} {}\n",
                         cluster, node, PromLabelValue(key), drift);
  }
  Family(out, "plumb_watch_nodes", "gauge", "Nodes plumb watch reads.");
  out += fmt::format("plumb_watch_nodes{{cluster=\"{}\"}} {}\n", cluster, s.nodes);
  Family(out, "plumb_watch_unreadable_nodes", "gauge",
         "Nodes whose last read failed (refused, timeout, host key, probe error).");
  out += fmt::format("plumb_watch_unreadable_nodes{{cluster=\"{}\"}} {}\n", cluster,
                     r.unreadable_nodes);
  Family(out, "plumb_watch_last_seen_timestamp_seconds", "gauge",
         "Unix time at which the node was last read.");
  for (const auto& [node, t] : s.last_seen_unix)
    out += fmt::format("plumb_watch_last_seen_timestamp_seconds{{cluster=\"{}\",node=\"{}\"}} {}\n",
                       cluster, PromLabelValue(node), t);
  Family(out, "plumb_watch_round_duration_seconds", "gauge",
         "Wall time of the last complete round (every node read once), start to last result.");
  if (s.last_round_seconds >= 0)
    out += fmt::format("plumb_watch_round_duration_seconds{{cluster=\"{}\"}} {:.3f}\n", cluster,
                       s.last_round_seconds);
  Family(out, "plumb_watch_rounds_total", "counter", "Complete rounds since plumb watch started.");
  out += fmt::format("plumb_watch_rounds_total{{cluster=\"{}\"}} {}\n", cluster, s.rounds);
  Family(out, "plumb_watch_events_total", "counter", "Events emitted, by kind.");
  for (EventKind k : {EventKind::kDrift, EventKind::kDriftCleared, EventKind::kNodeUnreadable,
                      EventKind::kNodeReadable, EventKind::kNodeRebooted,
                      EventKind::kDesiredChanged, EventKind::kDesiredError}) {
    auto it = s.events.find(k);
    out += fmt::format("plumb_watch_events_total{{cluster=\"{}\",event=\"{}\"}} {}\n", cluster,
                       EventKindName(k), it == s.events.end() ? 0ULL : it->second);
  }
  return out;
}

}  // namespace plumb::plans::watch
