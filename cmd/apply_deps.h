#pragma once
/// The real implementations behind the rollout engine's interfaces, built only here (the
/// composition root): the node transport (SSH shells, BMC power cycles), the scheduler's
/// drainer, and the observers that render progress. The re-probe is plans/rollout/gather_prober.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cmd/bmc_factory.h"
#include "inventory/model.h"
#include "modules/drain/drainer.h"
#include "modules/module.h"
#include "modules/transport/shell.h"
#include "plans/observe/bmc_gather.h"
#include "plans/observe/gather.h"
#include "plans/rollout/apply_prepare.h"
#include "plans/rollout/observer.h"
#include "plans/rollout/rollout.h"

namespace plumb::cmd {

/// SSH shells from the factory; BMC power cycles through Redfish when the node has a BMC and
/// the inventory names credentials.
class RealNodeTransport final : public plans::NodeTransport {
 public:
  RealNodeTransport(const inventory::Cluster& cluster, plans::ShellFactory& shells,
                    std::shared_ptr<BmcFactory> bmcs)
      : cluster_(cluster), shells_(shells), bmcs_(std::move(bmcs)) {}
  Result<std::unique_ptr<transport::Shell>> Connect(const std::string& node) override;
  transport::Bmc* Bmc(const std::string& node) override;
  Status PowerCycle(const std::string& node) override;

 private:
  const inventory::Cluster& cluster_;
  plans::ShellFactory& shells_;
  std::shared_ptr<BmcFactory> bmcs_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<transport::Bmc>> open_;
};

/// The drainer for a scheduler name ("slurm", "kubernetes", "none"); Slurm and kubectl run on
/// this host through `local`.
std::unique_ptr<modules::Drainer> MakeDrainer(inventory::DrainScheduler s, transport::Shell& local);

/// The environment Slurm's tools need from ours (SLURM_CONF).
std::map<std::string, std::string> SchedulerEnv();
/// The real drainers of `cluster`'s rollout policies; Slurm and kubectl run on this host
/// through `local` (SLURM_CONF from the environment).
plans::Schedulers RealSchedulers(const inventory::Cluster& cluster, transport::Shell& local);

/// Progress renderers: plain lines (CI logs), JSON lines (--format json), a live TTY table.
std::unique_ptr<plans::Observer> MakeObserver(const std::string& format, bool tty, bool color);

}  // namespace plumb::cmd
