#include "cmd/plan_scheduler.h"

#include "cmd/apply_deps.h"
#include "modules/drain/kubernetes_drainer.h"

namespace plumb::cmd {

PlanScheduler MakePlanScheduler(const inventory::Cluster& cluster,
                                const plans::DesiredByNode& desired) {
  PlanScheduler s;
  s.shell = std::make_unique<transport::LocalShell>(SchedulerEnv());
  transport::LocalShell& local = *s.shell;
  plans::Schedulers schedulers =
      plans::SchedulersFor(cluster, [&](inventory::DrainScheduler kind) -> std::unique_ptr<modules::Drainer> {
        if (kind == inventory::DrainScheduler::kKubernetes)
          return std::make_unique<modules::KubernetesDrainer>(local, std::chrono::seconds(60),
                                                              modules::BudgetReads::kRead);
        return MakeDrainer(kind, local);
      });
  s.view = std::make_unique<plans::ReadOnlySchedulers>(cluster, desired, std::move(schedulers));
  return s;
}

}  // namespace plumb::cmd
