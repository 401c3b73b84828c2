#pragma once
/// Admission of one batch's nodes, as a value: which node may start now, which must wait for a
/// slot, and when the batch halts or pauses. The engine (plans/rollout/rollout.cc) owns the threads,
/// the lock and the waiting; this owns the counting, so it is tested without either
/// (tests/plans/rollout/admission_test.cc).
///
/// The budget is max_unavailable over the policy's whole scope. Out = what the scheduler shows
/// unavailable (drained, down, an admin's, another run's), plus this run's nodes admitted with a
/// slot that are still running (their drain may not show yet). Every admission is made on a
/// fresh scheduler view (See), never on a count kept from before: an admin may drain a node,
/// or a returned node may fall out again, at any time.
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "modules/drain/drainer.h"
#include "plans/store/run_state.h"

namespace plumb::plans {

/// What stops admissions (besides the budget), read by the engine before each decision.
struct AdmissionGates {
  bool stopping = false;         ///< Ctrl-C, a broken journal, the process "dead"
  bool scheduler_down = false;   ///< unreadable past its timeout: the run pauses
  int failures = 0;              ///< nodes failed in the whole run so far
  int max_failures = 0;
  bool window_open = true;
};

class BatchAdmission {
 public:
  /// `todo`: the batch's nodes not yet finished, in order. `drains(node)` says whether a node's
  /// plan takes it out of service (only those need a slot); `run_id`: this run's, so its own
  /// drains are not taken for another run's.
  BatchAdmission(std::vector<std::string> todo, std::vector<std::string> scope, int limit,
                 bool canary, std::set<std::string> drains, std::string run_id);

  /// A fresh read of the scheduler: the view every later decision counts on.
  void See(std::map<std::string, modules::SchedulerNode> view);

  struct Decision {
    enum class Kind {
      kAdmit,     ///< start `node` now (`with_slot`: it takes one of the budget)
      kWait,      ///< no slot now: wait for a node to come back (or for running ones to end)
      kHalt,      ///< no new node starts: `reason` (failures, a failed canary)
      kPause,     ///< the maintenance window closed
      kStop,      ///< stopping, or the scheduler gave up: nothing more starts
      kEmpty,     ///< nothing left to admit
    };
    Kind kind = Kind::kEmpty;
    std::string node;
    bool with_slot = false;
    std::string reason;
  };
  /// The next thing to do. kAdmit takes the node off the queue and (with a slot) counts it out
  /// until Ended; every other kind leaves the queue as it is.
  Decision Next(const AdmissionGates& gates);

  /// A node's thread ended: its slot is free again (recounted from the next view: left drained,
  /// it still counts there). A failure counts against the canary batch.
  void Ended(const std::string& node, NodeState how);
  /// A node gave way to an older claim on the budget (untouched): back in the queue.
  void Requeue(const std::string& node);

  /// Nodes are waiting and none of ours runs: only the scheduler's view can free a slot.
  bool Blocked() const { return !queue_.empty() && running_ == 0; }
  bool Idle() const { return queue_.empty() && running_ == 0; }
  int running() const { return running_; }
  int batch_failures() const { return batch_failures_; }
  const std::deque<std::string>& queue() const { return queue_; }
  /// Takes what is still queued (for "not-started"), leaving the queue empty.
  std::vector<std::string> TakeQueue();

  int limit() const { return limit_; }
  /// Nodes out in the scope now (the view plus ours holding a slot), sorted.
  std::vector<std::string> Out() const;
  /// Another plumb run that holds nodes of the scope drained (and has not failed them): the
  /// budget frees when it is done with them, so a blocked batch waits longer for it. "" if none.
  std::string OtherRunHolding() const;
  /// "max_unavailable 2 reached: 2 node(s) out (n1 n4); 3 node(s) could not start"
  std::string BlockedReason() const;

 private:
  std::deque<std::string> queue_;
  std::vector<std::string> scope_;
  int limit_;
  bool canary_;
  std::set<std::string> drains_;
  std::string run_id_;
  std::map<std::string, modules::SchedulerNode> view_;
  std::set<std::string> holding_;   // ours, admitted with a slot, still running
  int running_ = 0;
  int batch_failures_ = 0;
};

}  // namespace plumb::plans
