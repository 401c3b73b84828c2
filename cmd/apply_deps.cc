#include "cmd/apply_deps.h"

#include <cstdlib>

#include "cmd/color.h"
#include "modules/drain/kubernetes_drainer.h"
#include "modules/drain/none_drainer.h"
#include "modules/drain/slurm_drainer.h"
#include "plans/report/progress.h"

namespace plumb::cmd {

std::unique_ptr<modules::Drainer> MakeDrainer(inventory::DrainScheduler s, transport::Shell& local) {
  switch (s) {
    case inventory::DrainScheduler::kSlurm: return std::make_unique<modules::SlurmDrainer>(local);
    case inventory::DrainScheduler::kKubernetes:
      return std::make_unique<modules::KubernetesDrainer>(local);
    case inventory::DrainScheduler::kNone: return std::make_unique<modules::NoneDrainer>();
  }
  return std::make_unique<modules::NoneDrainer>();
}

// Progress as plans/report/progress.h draws it, coloured here for a terminal.
std::unique_ptr<plans::Observer> MakeObserver(const std::string& format, bool tty, bool color) {
  using plans::report::ProgressKind;
  const ProgressKind kind = format == "json" ? ProgressKind::kJson
                            : tty            ? ProgressKind::kTable
                                             : ProgressKind::kLines;
  return plans::report::MakeProgressObserver(
      kind, stdout,
      {.line = [color](std::string_view l) { return ColorizeReport(l, color); },
       .status = [color](std::string_view s) { return ColorizeStatus(s, color); }});
}

std::map<std::string, std::string> SchedulerEnv() {
  std::map<std::string, std::string> env;
  if (const char* sc = std::getenv("SLURM_CONF")) env["SLURM_CONF"] = sc;
  return env;
}

// The real drainers of `cluster`'s rollout policies; Slurm and kubectl run on this host
// through `local` (SLURM_CONF from the environment).
plans::Schedulers RealSchedulers(const inventory::Cluster& cluster, transport::Shell& local) {
  return plans::SchedulersFor(cluster, [&](inventory::DrainScheduler kind) {
    return MakeDrainer(kind, local);
  });
}

}  // namespace plumb::cmd
