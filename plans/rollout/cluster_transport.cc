#include "plans/rollout/cluster_transport.h"

#include "modules/transport/bmc.h"
#include "plans/observe/gather.h"

namespace plumb::plans {

Result<std::unique_ptr<transport::Shell>> ClusterNodeTransport::Connect(const std::string& node) {
  const inventory::Node* n = cluster_.FindNode(node);
  if (!n) return Diagnostic::Error("apply.node", node + " is not in the inventory");
  return shells_.Open(*n);
}

transport::Bmc* ClusterNodeTransport::Bmc(const std::string& node) {
  const inventory::Node* n = cluster_.FindNode(node);
  if (!n || n->bmc.empty() || !open_bmc_) return nullptr;
  std::lock_guard lock(mu_);
  auto& slot = open_[node];
  if (!slot) slot = open_bmc_({node, n->bmc, n->bmc_system});
  return slot.get();
}

Status ClusterNodeTransport::PowerCycle(const std::string& node) {
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

ClusterRolloutParts::ClusterRolloutParts(const inventory::LoadedCluster& loaded, ShellFactory& shells,
                                         OpenBmc open_bmc,
                                         const std::vector<const modules::Module*>& all_modules,
                                         const std::map<std::string, nlohmann::json>* desired)
    : prober_(loaded.cluster, shells, ModulesToRead(all_modules, loaded.desired),
              std::chrono::seconds(loaded.cluster.ssh.command_timeout_s), open_bmc, desired),
      transport_(loaded.cluster, shells, std::move(open_bmc)),
      leases_(MakeShellLeases(transport_)) {}

void ClusterRolloutParts::Fill(RolloutDeps& deps) {
  deps.leases = leases_.get();
  deps.prober = &prober_;
  deps.transport = &transport_;
  deps.clock = &clock_;
}

}  // namespace plumb::plans
