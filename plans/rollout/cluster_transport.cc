#include "plans/rollout/cluster_transport.h"

#include "modules/transport/bmc.h"

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

}  // namespace plumb::plans
