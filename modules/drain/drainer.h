#pragma once
/// Drainer: takes nodes out of (and back into) the scheduler's service. Real ones: Slurm
/// (modules/drain/slurm_drainer.*), Kubernetes (cordon + evict), None. Tests use a fake.
/// The drain reason carries plumb's run id and step ("plumb:<run>:<step>"), so a node plumb
/// drained is recognisable from the scheduler alone, and a node drained for any other reason
/// is never resumed by plumb.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "modules/drain/claim.h"
#include "modules/drain/stack_tag.h"
#include "schemas/result.h"

namespace plumb::modules {

/// The Diagnostic code of "the scheduler cannot be read or written right now" (controller down,
/// an API error, a timeout, an empty node list for a cluster that has nodes). The engine never
/// counts it as a node failure: it admits nothing, waits, and pauses the run.
inline constexpr std::string_view kSchedulerUnavailable = "scheduler.unavailable";

/// A job that occupies a node, for reports and heartbeats.
struct SchedulerJob {
  std::string id, user, name;
  int64_t end_unix = 0;   ///< its time limit, unix seconds; 0 unknown or unlimited
};

/// One node as the scheduler sees it.
struct SchedulerNode {
  std::string name;
  std::string state;           ///< scheduler's own words: "idle", "mixed", "drained", "down*"...
  bool drain = false;          ///< drain flag set (draining or drained)
  bool drained = false;        ///< drain flag set AND no job left on the node
  bool down = false;           ///< down / not responding / powered off
  /// The scheduler has not heard from it lately (Slurm NOT_RESPONDING or UNKNOWN), as every
  /// node is for a while after slurmctld restarts: nobody's decision, and may clear by itself.
  bool unresponsive = false;
  std::string reason;          ///< the drain/down reason, "" if none
  int64_t reason_since = 0;    ///< when the reason was set (unix seconds), 0 unknown
  int running_jobs = 0;
  std::vector<std::string> jobs;   ///< "1234 (alice: train-llm)" for reports
  std::vector<SchedulerJob> job_details;   ///< the same jobs, with their time limits
  /// A plumb run's claim on the node (modules/drain/claim.h), if any: about to drain it.
  std::optional<NodeClaim> claim;
  /// The free-text field the claim lives in, as the scheduler has it (Slurm's node comment,
  /// with an admin's words kept), so a claim can be written without losing them.
  std::string comment;
  /// The stack plumb shows on it (its own features or labels, modules/drain/stack_tag.h);
  /// empty when it shows none.
  StackTag stack_tag;
  /// Slurm: every feature of the node as the scheduler lists them (AvailableFeatures), plumb's
  /// included, so SetStack can rewrite the list keeping everyone else's. Empty for Kubernetes,
  /// whose labels are keyed.
  std::vector<std::string> features;
  /// Slurm: the node's ActiveFeatures when the scheduler lists them. Equal to `features`
  /// without a node_features plugin; with one (KNL modes, helpers) a subset that SetStack must
  /// keep, not replace with the available list. nullopt: not listed (use `features`).
  std::optional<std::vector<std::string>> active_features;
  /// Slurm: the listing carried the node's features at all (`features` is then the truth,
  /// empty or not). SetStack rewrites the whole list, so it refuses a node whose list it never
  /// read rather than erase everyone else's features.
  bool features_known = false;
  /// Its scheduler can show a stack on it (Drainer::ShowsStacks): set by views that ask several
  /// schedulers (plans/observe/plan_schedulers.h), for the plan's stack counts.
  bool shows_stacks = false;

  /// Out of service for the purpose of max_unavailable.
  bool Unavailable() const { return drain || down; }
  /// Drained by plumb (the reason starts with "plumb:").
  bool DrainedByPlumb() const { return drain && reason.rfind("plumb:", 0) == 0; }
  /// Set down on purpose (`scontrol update state=down reason="PSU swap"`): down, not drained,
  /// with a reason that is neither Slurm's own "Not responding" nor plumb's. Out of service by
  /// someone's decision, like an admin's drain: plumb must not put it back.
  bool DownOnPurpose() const {
    return down && !drain && !reason.empty() && reason != "Not responding" &&
           reason.rfind("plumb:", 0) != 0;
  }
  /// Out only because the scheduler has not heard from it (yet): no drain, no reason of anyone's.
  bool Unsettled() const { return unresponsive && !drain && !DownOnPurpose(); }
  /// Taken out by someone other than plumb, who decides when it returns.
  bool HeldByAdmin() const { return (drain && !DrainedByPlumb()) || DownOnPurpose(); }
};

class Drainer {
 public:
  virtual ~Drainer() = default;
  virtual std::string_view Name() const = 0;   ///< "slurm", "kubernetes", "none"
  /// The scheduler's view of `nodes` (all of them if empty). A node the scheduler does not
  /// know is absent from the map.
  virtual Result<std::map<std::string, SchedulerNode>> Query(
      const std::vector<std::string>& nodes) = 0;
  /// Sets the drain flag with `reason`; returns at once (running jobs keep running).
  virtual Status Drain(const std::string& node, const std::string& reason) = 0;
  /// Returns the node to service.
  virtual Status Resume(const std::string& node) = 0;
  /// Pushes the work off a node this run drained; called at each poll while the run waits for
  /// the node to empty. Kubernetes evicts what is left (an eviction a PodDisruptionBudget
  /// refused is retried this way, as the API asks); Slurm lets jobs end by themselves, so the
  /// default does nothing. Its errors only delay: the wait's next read decides.
  virtual Status Evict(const std::string& node) {
    (void)node;
    return OkStatus();
  }

  /// Does this scheduler show one run's claims to the others (modules/drain/claim.h)? A
  /// scheduler only this process sees (none) has no other run to tell.
  virtual bool SharesClaims() const { return false; }
  /// Writes `claim` on `current.name` (what Query just showed of it), or clears the node's
  /// claim when claim.run is empty. Takes nothing out of service.
  virtual Status SetClaim(const SchedulerNode& current, const NodeClaim& claim) {
    (void)current, (void)claim;
    return OkStatus();
  }

  /// Can this scheduler show which stack a node runs (Slurm features, Kubernetes labels), so a
  /// job can ask for one? `none` cannot.
  virtual bool ShowsStacks() const { return false; }
  /// Shows `tag` on `current.name` (what Query just showed of it): plumb's own features or
  /// labels replaced, everyone else's kept; an empty tag removes plumb's. Takes nothing out of
  /// service and touches no job.
  virtual Status SetStack(const SchedulerNode& current, const StackTag& tag) {
    (void)current, (void)tag;
    return OkStatus();
  }
  /// The jobs, pending or running, that ask for a stack plumb shows (a Slurm constraint naming
  /// a `stack_` feature; a pod whose nodeSelector names plumb.dev/stack), for the plan.
  virtual Result<std::vector<StackRequest>> StackRequests() { return std::vector<StackRequest>{}; }
};

}  // namespace plumb::modules
