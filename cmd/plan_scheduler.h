#pragma once
/// The schedulers `plumb plan` reads (plans/observe/plan_schedulers.h), built with the drainers apply
/// uses (MakeDrainer), their CLIs run on this host (SLURM_CONF, KUBECONFIG from the
/// environment, as for any client); Kubernetes' also reads PodDisruptionBudgets, so a plan
/// names the pods a budget would not let go. Read-only: only Query is ever called.
#include <memory>

#include "inventory/model.h"
#include "modules/transport/local_shell.h"
#include "plans/plan/planner.h"
#include "plans/observe/plan_schedulers.h"

namespace plumb::cmd {

struct PlanScheduler {
  std::unique_ptr<transport::LocalShell> shell;
  std::unique_ptr<plans::ReadOnlySchedulers> view;
  modules::Drainer* drainer() const { return view.get(); }
};

/// Every rollout policy's scheduler of `cluster`, asked about `desired`'s nodes (which must
/// outlive the result). Nothing runs until Query.
PlanScheduler MakePlanScheduler(const inventory::Cluster& cluster,
                                const plans::DesiredByNode& desired);

}  // namespace plumb::cmd
