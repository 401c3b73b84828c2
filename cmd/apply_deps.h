#pragma once
/// The real implementations behind the rollout engine's interfaces, built only here (the
/// composition root): the scheduler's drainer and the observers that render progress. The node
/// transport is plans/rollout/cluster_transport, the re-probe plans/rollout/gather_prober.
#include <map>
#include <memory>
#include <string>

#include "inventory/model.h"
#include "modules/drain/drainer.h"
#include "modules/transport/shell.h"
#include "plans/observe/schedulers.h"
#include "plans/rollout/observer.h"
#include "plans/rollout/rollout.h"

namespace plumb::cmd {

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
