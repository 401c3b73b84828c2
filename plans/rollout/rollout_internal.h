#pragma once
// Internal to the rollout engine (plans/rollout*.cc, plans/node_run*.cc): the Engine, which runs
// the batches (main thread: admission against max_unavailable, the window, the failure budget),
// and NodeRun, which carries one node through its steps (one thread per node). Every step goes
// through NodeRun::Step, which journals the intent, runs the step, and journals the outcome:
// that one function is what makes resume possible. Nothing outside the engine includes this.
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "plans/core/poll.h"
#include "plans/rollout/admission.h"
#include "plans/rollout/rollout.h"
#include "plans/rollout/window.h"
#include "plans/store/step_name.h"

namespace plumb::plans::rollout_detail {

using modules::Disruption;
using std::chrono::milliseconds;

// Thrown inside a node thread once the crash hook has fired: the process is "dead", nothing more
// may be written or done. Caught at the top of the thread; never leaves the engine.
struct Dead {};

std::string Trim(std::string s);
std::string LastLine(const std::string& s);

struct StepResult {
  StepState outcome = StepState::kOk;
  /// The probe step only: the node's facts changed since the plan. Journaled as skipped.
  bool stale = false;
  std::string error;
  nlohmann::json detail = nlohmann::json::object();
  static StepResult Ok(nlohmann::json d = nlohmann::json::object()) {
    return {StepState::kOk, false, "", std::move(d)};
  }
  static StepResult Failed(std::string e) {
    return {StepState::kFailed, false, std::move(e), nlohmann::json::object()};
  }
  static StepResult Skipped(std::string why) {
    return {StepState::kSkipped, false, "", nlohmann::json{{"why", std::move(why)}}};
  }
  static StepResult SkippedWith(nlohmann::json detail) {
    return {StepState::kSkipped, false, "", std::move(detail)};
  }
  static StepResult Stale(nlohmann::json detail) {
    return {StepState::kSkipped, true, "", std::move(detail)};
  }
  static StepResult Interrupted() {
    return {StepState::kInterrupted, false, "", nlohmann::json::object()};
  }
  /// The word progress events show.
  std::string Word() const { return stale ? "stale" : std::string(Name(outcome)); }
};

class Engine;

// One node's walk through its steps. Returns via `out`.
class NodeRun {
 public:
  NodeRun(Engine& e, const NodePlan& np, const Batch& b, const inventory::RolloutPolicy& policy,
          std::vector<StepRecord> prior, std::optional<NodeRecord> prior_node, bool adopted)
      : e_(e), np_(np), batch_(b), policy_(policy), prior_(std::move(prior)),
        prior_node_(std::move(prior_node)), adopted_(adopted) {
    out_.node = np.node;
  }
  void Run();
  const NodeOutcome& outcome() const { return out_; }
  bool returned_to_service() const { return returned_; }

 private:
  bool Steps();
  bool Lease();
  void ReleaseLease();
  void Busy(const std::string& why);
  bool CheckActionsFollow(const NodeFacts& facts);
  bool Drain();
  bool WaitDrained();
  /// The node must still be out, with no job, before `next` changes it (read from the
  /// scheduler right then, whoever drained it): plumb's own drain that the scheduler lost (a
  /// restart) or someone lifted is set again and its jobs waited for again; an admin's node
  /// returned to service stops here. False when the node must stop here.
  bool StillOut(const StepName& next);
  /// The node is no longer out of service (or has a job) and is not plumb's to take out again:
  /// it stops before `step`, failed with `why`, untouched from here on, its lease released.
  void StoppedBeforeStep(const StepName& step, const std::string& why);
  bool Redrain(const modules::SchedulerNode& n);
  /// Right after this node was drained: does its scope still hold at most max_unavailable out?
  /// Another run (another journal) or an admin may have taken nodes out since the engine
  /// counted. When over, the newest claims give way: this node is returned to service at once,
  /// untouched, and "deferred" for a later admission. False when it gave way.
  bool BudgetHolds();
  /// Before this node's drain: claims it in the scheduler, then reads its scope; true when the
  /// nodes out plus every live claim (this one included) fit max_unavailable, so the drain may
  /// go ahead. Otherwise clears the claim, defers the node (given way, untouched) and returns
  /// false. See modules/drain/claim.h for why this keeps runs of different journals within one
  /// budget. True at once for a scheduler that shows no claims (none).
  bool ClaimHolds(const modules::SchedulerNode& sn);
  /// Clears this run's claim on the node (best effort: a claim left behind expires).
  void DropClaim(const modules::SchedulerNode& sn);
  /// The scope as the scheduler shows it, waiting while it cannot be read: no change starts on
  /// a count nobody could make (fail closed). nullopt when the node must stop (interrupted at
  /// `step`, the run paused past scheduler_timeout, or stopping).
  std::optional<std::map<std::string, modules::SchedulerNode>> ReadScope(
      const StepName& step, Clock::TimePoint start);
  /// Gives the node back to the pool for a later admission: "deferred", lease released, and a
  /// random pause to desynchronise from the run it collided with.
  void Defer(const std::string& why);
  bool ApplyAction(const PlannedAction& pa);
  bool Reboot();
  bool Verify();
  bool Health();
  bool Marker();
  bool ReturnToService();
  /// The stack tag this node should show once converged (modules/drain/stack_tag.h); nullopt
  /// when the run sets none (a partial run, a scheduler without tags, no stack known).
  std::optional<modules::StackTag> WantedTag();
  /// Sets `tag` on the node as the scheduler shows it now (skipped when it shows it already).
  StepResult SetTag(const StepName& step, const modules::StackTag& tag);
  /// "stack:clear", before the first change: false when the node must stop.
  bool HideStack();
  /// "stack:set", after the marker.
  bool ShowStack();

  StepResult Step(const StepName& name, nlohmann::json detail,
                  const std::function<StepResult()>& fn);
  bool Check(const StepName& step, const StepResult& r);   // false: stop this node
  void Fail(const StepName& step, const std::string& error);
  void Interrupt(const StepName& step);
  bool Stopping() const;
  bool ContinueTo(const StepName& next);
  const StepRecord* Last(const StepName& step) const;
  void Put(NodeState status, const std::string& error = {});

  modules::Drainer& Sched();
  enum class SchedRead { kOk, kUnknownNode, kGaveUp };
  /// This node as the scheduler sees it, waiting while the scheduler cannot be read (up to the
  /// policy's scheduler_timeout, then the run pauses); kGaveUp also when stopping.
  SchedRead ReadNode(const StepName& step, modules::SchedulerNode* out);
  /// Runs a scheduler write (drain, resume), waiting and retrying while the scheduler is
  /// unavailable; an error that is not "unavailable" is returned as it is.
  Status SchedulerCall(const StepName& step, const std::function<Status()>& call);
  /// A progress event (and the node's journal note) at most every timing.heartbeat.
  void Heartbeat(const StepName& step, Clock::TimePoint since, const std::string& what,
                 const std::string& status = {});
  /// "waiting for 1 job(s): 1234 (alice: train, 58m left); 1m30s of 4h"
  std::string WaitingFor(const modules::SchedulerNode& n, Clock::TimePoint since) const;
  Result<transport::Shell*> ShellNow();
  Result<std::string> ReadBootId();
  nlohmann::json Desired() const;
  /// Action ids the modules still want, from fresh facts; error text if facts are unusable.
  Result<std::vector<modules::Action>> Remaining(const NodeFacts& f) const;
  std::vector<modules::Action> WithoutWaived(std::vector<modules::Action> actions) const;
  /// Between looks at the scheduler, and at the node (capped lower where the wait is short).
  plans::Backoff SchedulerBackoff() const;
  plans::Backoff NodeBackoff(std::chrono::milliseconds cap = std::chrono::milliseconds::max()) const;
  /// Poll's stop condition in a node thread: a dead process abandons the wait at once.
  bool StopWaiting() const;

  Engine& e_;
  const NodePlan& np_;
  const Batch& batch_;
  const inventory::RolloutPolicy& policy_;
  std::vector<StepRecord> prior_;
  std::optional<NodeRecord> prior_node_;
  bool adopted_;
  bool touched_ = false;          // plumb already changed or drained it in this run
  bool changed_ = false;          // plumb already changed it (an action, a reboot...)
  bool drained_by_us_ = false;
  bool admin_ = false;
  std::string admin_reason_;
  bool returned_ = false;
  bool lease_held_ = false;
  bool claimed_ = false;          // this run's claim is on the node (ClaimHolds)
  std::optional<Clock::TimePoint> last_heartbeat_;
  std::string note_;              // what the node waits for, for `plumb runs RUN`
  std::string started_at_;
  std::unique_ptr<transport::Shell> shell_;
  NodeOutcome out_;
};

class Engine {
 public:
  Engine(const Plan& plan, const RolloutOptions& opts, RolloutDeps& deps)
      : plan_(plan), opts_(opts), d_(deps) {}

  RolloutResult Run();
  /// The plan's in-sync nodes, in service and unclaimed, show the commit's stack to their
  /// scheduler (plans/rollout/stack_tags.cc); notes, never failures.
  void ShowInSyncStacks();

  // Shared with NodeRun.
  const Plan& plan() const { return plan_; }
  /// The commit applied (the markers'): the options', else the plan's.
  const std::string& Commit() const {
    return opts_.commit.empty() ? plan_.source.commit : opts_.commit;
  }
  const RolloutOptions& opts() const { return opts_; }
  RolloutDeps& deps() { return d_; }
  bool dead() const { return dead_.load(); }
  bool stopping() const {
    return (d_.stop && d_.stop->load()) || journal_broken_.load() ||
           (d_.lock_expiring && d_.lock_expiring());
  }
  std::string Now() { return Rfc3339(d_.clock->Now()); }
  void Emit(RolloutEvent e) {
    if (dead() || !d_.observer) return;
    e.time = Now();
    e.run = opts_.run_id;
    d_.observer->OnEvent(e);
  }
  /// The crash hook: true when the process must be considered dead from here on.
  bool Crash(const std::string& point) {
    if (dead()) return true;
    if (d_.crash && d_.crash(point)) {
      dead_ = true;
      return true;
    }
    return false;
  }
  void JournalBroken(const Diagnostic& d) {
    std::lock_guard lock(mu_);
    if (!journal_broken_) diags_.Add(d);
    journal_broken_ = true;
  }

  modules::Drainer& DrainerFor(const std::string& rollout) {
    if (auto it = d_.drainers.find(rollout); it != d_.drainers.end() && it->second)
      return *it->second;
    return *d_.drainer;
  }
  /// The policy the engine enforces: the commit's (opts.policies), else the plan's copy.
  const inventory::RolloutPolicy* PolicyFor(const std::string& rollout) const {
    if (auto it = opts_.policies.find(rollout); it != opts_.policies.end()) return &it->second;
    if (auto it = plan_.rollouts.find(rollout); it != plan_.rollouts.end()) return &it->second;
    return nullptr;
  }
  /// Nodes this process has claimed (or is claiming) right now. A claim of this run on any
  /// other node is a leftover of an earlier process of the run (killed between claim and
  /// drain): nobody will drain it, so it holds no slot (it is replaced when that node's turn
  /// comes). Entered before the claim is written, so the set always covers the live ones.
  void SetClaimedNow(const std::string& node, bool claimed) {
    std::lock_guard lock(claims_mu_);
    if (claimed) claimed_now_.insert(node);
    else claimed_now_.erase(node);
  }
  bool ClaimedNow(const std::string& node) {
    std::lock_guard lock(claims_mu_);
    return claimed_now_.count(node) > 0;
  }
  /// The scheduler stayed unreadable past its timeout: admit nothing more; the run pauses.
  void SchedulerGaveUp(const std::string& why) {
    // Its own mutex: this is called with mu_ held (the admission loop) and without it (node
    // threads).
    std::lock_guard lock(sched_mu_);
    if (scheduler_reason_.empty()) scheduler_reason_ = why;
    scheduler_down_ = true;
  }
  std::string scheduler_reason() {
    std::lock_guard lock(sched_mu_);
    return scheduler_reason_;
  }
  bool scheduler_down() const { return scheduler_down_.load(); }

  LeaseHolder Me() const {
    return {opts_.run_id, opts_.owner_host, opts_.owner_pid, opts_.owner_user, 0};
  }
  void HoldLease(const std::string& node) {
    std::lock_guard lock(lease_mu_);
    leases_held_.insert(node);
  }
  void DropLease(const std::string& node) {
    std::lock_guard lock(lease_mu_);
    leases_held_.erase(node);
  }
  /// Set by the renewer when another run took the node's lease (ours had expired).
  std::optional<std::string> LeaseLostTo(const std::string& node) {
    std::lock_guard lock(lease_mu_);
    if (auto it = leases_lost_.find(node); it != leases_lost_.end()) return it->second;
    return std::nullopt;
  }
  /// Every node under the rollout policy (max_unavailable counts them all).
  std::vector<std::string> ScopeOf(const std::string& rollout) const;
  /// Renews every lease this run holds, every timing.lease_renew, until `done`.
  void RenewLeases(const std::atomic<bool>& done);
  void StopRenewing() {
    std::lock_guard lock(lease_mu_);
    lease_cv_.notify_all();
  }

 private:
  /// The scheduler's view of `scope`, waiting (with backoff and heartbeats) while it cannot be
  /// read, up to the policy's scheduler_timeout; an error once it gave up (or on Ctrl-C).
  Result<std::map<std::string, modules::SchedulerNode>> ReadScheduler(
      modules::Drainer& drainer, const std::vector<std::string>& scope,
      const inventory::RolloutPolicy& policy);
  void MarkNotStarted(const std::string& node);
  std::string Summary() const;
  /// Admits and runs one batch's `todo` nodes (the main thread), until each ended or the batch
  /// halts, pauses or stops; sets halt_reason_ / paused_ when it does.
  void RunBatch(const Batch& b, const std::vector<std::string>& todo,
                const inventory::RolloutPolicy& policy, const Window& window);
  /// Starts `node`'s thread (with mu_ held); it reports its end to `adm` under mu_.
  void StartNode(const std::string& node, const Batch& b, const inventory::RolloutPolicy& policy,
                 BatchAdmission& adm, std::vector<std::thread>& threads,
                 std::vector<std::unique_ptr<NodeRun>>& runs);

  const Plan& plan_;
  const RolloutOptions& opts_;
  RolloutDeps& d_;
  std::atomic<bool> dead_{false};
  std::atomic<bool> journal_broken_{false};
  std::atomic<bool> scheduler_down_{false};
  std::mutex sched_mu_;
  std::string scheduler_reason_;
  std::mutex lease_mu_;
  std::condition_variable lease_cv_;   // wakes the renewer at the run's end
  std::set<std::string> leases_held_;
  std::map<std::string, std::string> leases_lost_;
  std::mutex mu_;
  std::mutex claims_mu_;
  std::set<std::string> claimed_now_;
  std::condition_variable cv_;
  Diagnostics diags_;
  std::map<std::string, NodeOutcome> outcomes_;
  int failures_ = 0;
  // What an earlier attempt of this run already did (--resume), and the nodes to adopt.
  std::map<std::string, NodeRecord> prior_nodes_;
  std::map<std::string, std::vector<StepRecord>> prior_steps_;
  std::set<std::string> adopt_;
  // Why no new node starts (the first reason wins); the window closed; when it opens again.
  std::string halt_reason_;
  bool paused_ = false;
  std::string next_window_;
};

}  // namespace plumb::plans::rollout_detail
