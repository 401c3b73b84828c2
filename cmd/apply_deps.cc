#include "cmd/apply_deps.h"

#include <cstdlib>

#include "cmd/color.h"
#include "modules/drain/kubernetes_drainer.h"
#include "modules/drain/none_drainer.h"
#include "modules/drain/slurm_drainer.h"
#include "modules/transport/bmc.h"
#include "plans/report/progress.h"

namespace plumb::cmd {

Result<std::unique_ptr<transport::Shell>> RealNodeTransport::Connect(const std::string& node) {
  const inventory::Node* n = cluster_.FindNode(node);
  if (!n) return Diagnostic::Error("apply.node", node + " is not in the inventory");
  return shells_.Open(*n);
}

transport::Bmc* RealNodeTransport::Bmc(const std::string& node) {
  const inventory::Node* n = cluster_.FindNode(node);
  if (!n || n->bmc.empty() || !bmcs_) return nullptr;
  std::lock_guard lock(mu_);
  auto& slot = open_[node];
  if (!slot) slot = bmcs_->Open({node, n->bmc, n->bmc_system});
  return slot.get();
}

Status RealNodeTransport::PowerCycle(const std::string& node) {
  transport::Bmc* b = Bmc(node);
  if (!b)
    return Diagnostic::Error("apply.no-bmc",
                             node + " has no usable BMC (no bmc: URL or no credentials)");
  auto sys = b->SystemLink();
  if (!sys) return sys.error();
  auto r = b->Reset(*sys, transport::ResetKind::kHardReboot);
  if (!r) return r.error();
  return OkStatus();
}

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
