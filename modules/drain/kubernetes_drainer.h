#pragma once
/// KubernetesDrainer: cordon + evict through kubectl, the reason kept in a node annotation
/// (`plumb.dev/drain-reason`), uncordon to resume. Pods owned by a DaemonSet and mirror pods do
/// not count as work on the node. Plan's drainer also reads PodDisruptionBudgets, to name the
/// pods whose eviction a budget refuses now (apply's polls need only the pods). Evictions go through the API's eviction subresource (`kubectl
/// drain`), so PodDisruptionBudgets hold: a refused eviction (429) is tried again at the run's
/// next poll until the policy's drain timeout, which names the pods left. Bare pods (no
/// controller) are never deleted: they block the drain until someone moves them. Tested on
/// kubectl's JSON (tests/modules/drain) and with real kubectl against the testbed's API
/// emulator (tests/testbed/kube, tests/integration/apply_kubernetes.sh).
#include <chrono>
#include <optional>

#include <nlohmann/json.hpp>

#include "modules/drain/drainer.h"
#include "modules/transport/shell.h"

namespace plumb::modules {

inline constexpr const char* kKubeReasonAnnotation = "plumb.dev/drain-reason";
/// A run's claim before it drains (modules/drain/claim.h), "<run>@<unix seconds>".
inline constexpr const char* kKubeClaimAnnotation = "plumb.dev/claim";

/// Whether Query reads PodDisruptionBudgets too (one more API list per call).
enum class BudgetReads { kSkip, kRead };

class KubernetesDrainer final : public Drainer {
 public:
  explicit KubernetesDrainer(transport::Shell& shell,
                             std::chrono::milliseconds timeout = std::chrono::seconds(60),
                             BudgetReads budgets = BudgetReads::kSkip)
      : shell_(shell), timeout_(timeout), budgets_(budgets) {}
  std::string_view Name() const override { return "kubernetes"; }
  Result<std::map<std::string, SchedulerNode>> Query(const std::vector<std::string>& nodes) override;
  /// Annotates the reason and cordons; the evictions follow in Evict, while the run waits.
  Status Drain(const std::string& node, const std::string& reason) override;
  /// `kubectl drain` for a few seconds: evicts what is left (DaemonSet pods stay; emptyDir data
  /// goes with its pod), waits briefly for them to go; a budget's refusal is not an error.
  Status Evict(const std::string& node) override;
  /// Uncordons and removes the annotation.
  Status Resume(const std::string& node) override;
  bool SharesClaims() const override { return true; }
  /// Sets (or removes) the plumb.dev/claim annotation.
  Status SetClaim(const SchedulerNode& current, const NodeClaim& claim) override;
  /// Node labels plumb.dev/stack and plumb.dev/commit (modules/drain/stack_tag.h).
  bool ShowsStacks() const override { return true; }
  /// One `kubectl label node <node> --overwrite plumb.dev/stack=<s> plumb.dev/commit=<c>`; an
  /// empty part removes its label (`plumb.dev/stack-`). No other label is touched. A tag
  /// TagProblem refuses is an error before anything runs.
  Status SetStack(const SchedulerNode& current, const StackTag& tag) override;
  /// Pods not finished, in every namespace, whose nodeSelector or required node affinity
  /// (`In`) names plumb.dev/stack.
  Result<std::vector<StackRequest>> StackRequests() override;

  static std::string StackCommand(const std::string& node, const StackTag& tag);
  static std::string ClaimCommand(const std::string& node, const NodeClaim& claim);
  static std::vector<std::string> DrainCommands(const std::string& node, const std::string& reason);
  static std::string EvictCommand(const std::string& node);
  static std::vector<std::string> ResumeCommands(const std::string& node);

 private:
  transport::Shell& shell_;
  std::chrono::milliseconds timeout_;
  BudgetReads budgets_;
};

namespace kube {
/// `kubectl get nodes -o json` -> nodes (drain = unschedulable, reason from the annotation,
/// down = Ready condition not True, stack_tag from the plumb.dev/stack and plumb.dev/commit
/// labels).
Result<std::map<std::string, SchedulerNode>> ParseNodes(std::string_view text);
/// A PodDisruptionBudget as `kubectl get poddisruptionbudgets -A -o json` lists it: the pods it
/// selects (matchLabels and matchExpressions) and how many of them may be evicted now.
struct Budget {
  std::string ns, name;
  /// spec.selector; null selects no pod, {} every pod of the namespace (policy/v1).
  nlohmann::json selector;
  std::optional<int64_t> disruptions_allowed;   ///< status.disruptionsAllowed, if reported
  /// Does it select a pod of namespace `ns` with `labels`?
  bool Selects(const std::string& ns, const nlohmann::json& labels) const;
};
Result<std::vector<Budget>> ParseBudgets(std::string_view text);
/// `kubectl get pods -A -o json` folded into `nodes`: running pods that are not DaemonSet or
/// mirror pods count as jobs. With `budgets`, a running pod a budget that allows no disruption
/// now selects is named with it: "ml/trainer-a (PodDisruptionBudget ml/trainer allows no
/// eviction now)", as the eviction API would refuse it (429).
Status AttachPods(std::map<std::string, SchedulerNode>& nodes, std::string_view text,
                  const std::vector<Budget>* budgets = nullptr);
/// `kubectl get pods -A -o json` -> the Pending and Running pods that ask for a stack: one
/// StackRequest per (pod, stack) named by spec.nodeSelector["plumb.dev/stack"] or by a
/// required node affinity term's `plumb.dev/stack In (...)`. id "ns/name", user the namespace.
Result<std::vector<StackRequest>> ParseStackRequests(std::string_view text);
}  // namespace kube

}  // namespace plumb::modules
