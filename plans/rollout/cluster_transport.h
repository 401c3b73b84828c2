#pragma once
/// The engine's NodeTransport over a cluster's nodes: SSH shells from the factory; each node's
/// BMC (opened once, when the node has a `bmc:` URL and an opener is given) for the modules and
/// the power cycle. cmd/ gives it the real shells and Redfish sessions; tested with fakes in
/// tests/plans/rollout/cluster_transport_test.cc.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "inventory/load.h"
#include "inventory/model.h"
#include "plans/core/clock.h"
#include "plans/observe/bmc_gather.h"
#include "plans/observe/gather.h"
#include "plans/rollout/gather_prober.h"
#include "plans/rollout/node_lease.h"
#include "plans/rollout/rollout.h"

namespace plumb::plans {

class ClusterNodeTransport final : public NodeTransport {
 public:
  /// `open_bmc` may be empty: no node has a usable BMC (no credentials in the inventory).
  ClusterNodeTransport(const inventory::Cluster& cluster, ShellFactory& shells, OpenBmc open_bmc)
      : cluster_(cluster), shells_(shells), open_bmc_(std::move(open_bmc)) {}
  Result<std::unique_ptr<transport::Shell>> Connect(const std::string& node) override;
  /// The node's BMC session, opened on first use and kept; nullptr when it has none.
  transport::Bmc* Bmc(const std::string& node) override;
  /// A hard reboot through the node's BMC; an error when it has none.
  Status PowerCycle(const std::string& node) override;

 private:
  const inventory::Cluster& cluster_;
  ShellFactory& shells_;
  OpenBmc open_bmc_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<transport::Bmc>> open_;
};

/// The engine's parts that reach the nodes, over the shells and BMC sessions cmd/ builds: a
/// re-probe of the modules `loaded`'s desired state reads (BMCs included when `open_bmc` is
/// set), the node transport, node leases over the shells, and the real clock. Fill() points a
/// RolloutDeps at them; the rest of it (journal, schedulers, observer, stop, hooks, modules) is
/// the caller's. Must outlive the run.
class ClusterRolloutParts {
 public:
  ClusterRolloutParts(const inventory::LoadedCluster& loaded, ShellFactory& shells, OpenBmc open_bmc,
                      const std::vector<const modules::Module*>& all_modules,
                      const std::map<std::string, nlohmann::json>* desired);
  void Fill(RolloutDeps& deps);

 private:
  // In this order: prober_ copies the BMC opener that transport_ then takes.
  GatherProber prober_;
  ClusterNodeTransport transport_;
  std::unique_ptr<NodeLeases> leases_;
  RealClock clock_;
};

}  // namespace plumb::plans
