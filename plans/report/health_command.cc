// `plumb health` over its sources (plans/report/health_command.h).
#include "plans/report/health_command.h"

#include <chrono>

#include "plans/plan/node_select.h"
#include "schemas/exit_codes.h"

namespace plumb::plans::report {

HealthProgress HealthProgressTo(std::FILE* out, bool tty) {
  return [out, tty](const NodeHealth& h, size_t done, size_t total) {
    if (tty) {
      std::fprintf(out, "\rhealth: %zu/%zu nodes", done, total);
      if (done == total) std::fprintf(out, "\r\033[K");
    } else if (h.Verdict() == modules::CheckStatus::kFail) {
      std::fprintf(out, "health: %s failed (%zu/%zu)\n", h.node.c_str(), done, total);
    }
    std::fflush(out);
  };
}

int RunHealthCommand(const HealthCommandRequest& req, const HealthSources& src, std::ostream& out,
                     std::ostream& err) {
  constexpr std::string_view kVerb = "health";
  if (req.fanout < 1 || req.timeout_s < 1) {
    err << "error: --fanout and --timeout must be at least 1\n";
    return ExitCodeFor(kVerb, Outcome::kRefused);
  }
  inventory::LoadedCluster loaded = src.load();
  err << loaded.diags.ToText();
  if (!loaded.ok()) {
    err << "plumb health: " << src.load_failure(loaded).ToString() << "\n";
    return ExitCodeFor(kVerb, Outcome::kError);
  }
  const inventory::Cluster& cluster = loaded.cluster;
  auto nodes = SelectNodes(cluster, req.limit);
  if (!nodes.ok()) {
    err << nodes.error().ToString() << "\n";
    return ExitCodeFor(kVerb, Outcome::kRefused);
  }
  // Read-only: what the schedulers say now, so the checks that load every GPU never run under
  // a job (nothing is drained or claimed).
  const SchedulerView view = req.allow_busy ? SchedulerView{} : src.schedulers(cluster);
  HealthCheckRequest check{&cluster, &loaded.desired, *nodes, req.allow_busy ? nullptr : &view,
                           src.modules, req.fanout, std::chrono::seconds(req.timeout_s),
                           src.progress};
  std::unique_ptr<ShellFactory> shells = src.shells(cluster);
  HealthReport report = CheckHealth(check, *shells);
  report.wall_s = src.elapsed_s ? src.elapsed_s() : 0.0;
  return EmitOutcome(kVerb, HealthCommandOutcome(report, req.format, src.now_unix(), src.style),
                     {req.file, req.format}, out, err);
}

}  // namespace plumb::plans::report
