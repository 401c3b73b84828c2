// Prometheus text exposition (format 0.0.4) for node_exporter's textfile collector: written to
// a .prom file by a cron'd `plumb drift --format prom --out`, scraped with the node's metrics.
#include <map>

#include <fmt/format.h>

#include "plans/core/clock.h"
#include "plans/report/drift_render.h"

namespace plumb::plans::report {
namespace {

std::string Label(std::string_view v) { return PromLabelValue(v); }

void Family(std::string& out, const char* name, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
}

}  // namespace

// Label values escape backslash, double quote and newline, and nothing else.
std::string PromLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string DriftToProm(const DriftReport& r, const RenderOptions& o) {
  const std::string cluster = Label(r.cluster);
  std::string out;
  Family(out, "plumb_drift",
         "1 when a module of a node has unwaived drift from the pinned desired state, else 0.");
  for (const DriftNode& n : r.nodes) {
    if (!n.readable) continue;
    std::map<std::string, int> by_module;   // sorted, so the file is stable between runs
    for (const DriftCheck& c : n.checks) {
      if (c.status == DriftStatus::kUnchecked) continue;
      by_module[c.module()] |= c.status == DriftStatus::kDrift ? 1 : 0;
    }
    for (const auto& [module, drift] : by_module)
      out += fmt::format("plumb_drift{{cluster=\"{}\",node=\"{}\",module=\"{}\"}} {}\n", cluster,
                         Label(n.node), Label(module), drift);
  }
  Family(out, "plumb_drift_keys", "Number of desired keys of a node with unwaived drift.");
  for (const DriftNode& n : r.nodes)
    if (n.readable)
      out += fmt::format("plumb_drift_keys{{cluster=\"{}\",node=\"{}\"}} {}\n", cluster,
                         Label(n.node), n.Count(DriftStatus::kDrift));
  Family(out, "plumb_drift_waived_keys", "Number of desired keys of a node whose drift is waived.");
  for (const DriftNode& n : r.nodes)
    if (n.readable)
      out += fmt::format("plumb_drift_waived_keys{{cluster=\"{}\",node=\"{}\"}} {}\n", cluster,
                         Label(n.node), n.Count(DriftStatus::kWaived));
  Family(out, "plumb_node_readable", "1 when plumb could read the node's live state, else 0.");
  for (const DriftNode& n : r.nodes)
    out += fmt::format("plumb_node_readable{{cluster=\"{}\",node=\"{}\"}} {}\n", cluster,
                       Label(n.node), n.readable ? 1 : 0);
  Family(out, "plumb_node_unhealthy",
         "1 when a health check of the node failed (a finding, not drift), else 0.");
  for (const DriftNode& n : r.nodes)
    if (n.readable)
      out += fmt::format("plumb_node_unhealthy{{cluster=\"{}\",node=\"{}\"}} {}\n", cluster,
                         Label(n.node), n.Unhealthy() ? 1 : 0);
  Family(out, "plumb_health_finding",
         "1 for each health check that failed or warned: its module, check id, subject (GPU, "
         "port) and status.");
  for (const DriftNode& n : r.nodes)
    for (const Finding& f : n.findings)
      out += fmt::format(
          "plumb_health_finding{{cluster=\"{}\",node=\"{}\",module=\"{}\",check=\"{}\","
          "subject=\"{}\",status=\"{}\"}} 1\n",
          cluster, Label(n.node), Label(f.check.module), Label(f.check.id), Label(f.check.subject),
          modules::CheckStatusName(f.check.status));
  Family(out, "plumb_drift_exit_code",
         "The drift run's verdict as its exit code: 0 in sync, 2 drift, 1 error or partial.");
  out += fmt::format("plumb_drift_exit_code{{cluster=\"{}\",commit=\"{}\"}} {}\n", cluster,
                     Label(r.source.commit), DriftExitCode(r));
  Family(out, "plumb_last_run_timestamp_seconds",
         "Unix time at which this drift report was made.");
  out += fmt::format("plumb_last_run_timestamp_seconds{{cluster=\"{}\"}} {}\n", cluster, o.now_unix);
  // When the facts were read: a snapshot's own time with --facts, not the report's.
  if (auto t = ParseRfc3339(r.gathered_at)) {
    Family(out, "plumb_facts_gathered_timestamp_seconds",
           "Unix time at which the facts this report judged were gathered.");
    out += fmt::format("plumb_facts_gathered_timestamp_seconds{{cluster=\"{}\"}} {}\n", cluster,
                       std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch()).count());
  }
  return out;
}

}  // namespace plumb::plans::report
