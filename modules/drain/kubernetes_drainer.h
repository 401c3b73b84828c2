#pragma once
/// KubernetesDrainer: cordon + evict through kubectl, the reason kept in a node annotation
/// (`plumb.dev/drain-reason`), uncordon to resume. Pods owned by a DaemonSet and mirror pods do
/// not count as work on the node. Thin: unit-tested on kubectl's JSON, not against a cluster.
#include <chrono>

#include "modules/drain/drainer.h"
#include "modules/transport/shell.h"

namespace plumb::modules {

inline constexpr const char* kKubeReasonAnnotation = "plumb.dev/drain-reason";
/// A run's claim before it drains (modules/drain/claim.h), "<run>@<unix seconds>".
inline constexpr const char* kKubeClaimAnnotation = "plumb.dev/claim";

class KubernetesDrainer final : public Drainer {
 public:
  explicit KubernetesDrainer(transport::Shell& shell,
                             std::chrono::milliseconds timeout = std::chrono::seconds(60))
      : shell_(shell), timeout_(timeout) {}
  std::string_view Name() const override { return "kubernetes"; }
  Result<std::map<std::string, SchedulerNode>> Query(const std::vector<std::string>& nodes) override;
  /// Annotates, cordons, and starts an eviction (`kubectl drain` with a short timeout; the
  /// rollout's wait for drained does the waiting).
  Status Drain(const std::string& node, const std::string& reason) override;
  /// Uncordons and removes the annotation.
  Status Resume(const std::string& node) override;
  bool SharesClaims() const override { return true; }
  /// Sets (or removes) the plumb.dev/claim annotation.
  Status SetClaim(const SchedulerNode& current, const NodeClaim& claim) override;

  static std::string ClaimCommand(const std::string& node, const NodeClaim& claim);
  static std::vector<std::string> DrainCommands(const std::string& node, const std::string& reason);
  static std::vector<std::string> ResumeCommands(const std::string& node);

 private:
  transport::Shell& shell_;
  std::chrono::milliseconds timeout_;
};

namespace kube {
/// `kubectl get nodes -o json` -> nodes (drain = unschedulable, reason from the annotation,
/// down = Ready condition not True).
Result<std::map<std::string, SchedulerNode>> ParseNodes(std::string_view text);
/// `kubectl get pods -A -o json` folded into `nodes`: running pods that are not DaemonSet or
/// mirror pods count as jobs.
Status AttachPods(std::map<std::string, SchedulerNode>& nodes, std::string_view text);
}  // namespace kube

}  // namespace plumb::modules
