// The apply state machine. Engine runs the batches (main thread: admission against
// max_unavailable, the window, the failure budget); NodeRun carries one node through its steps
// (one thread per node). Every step goes through NodeRun::Step, which journals the intent, runs
// the step, and journals the outcome: that one function is what makes resume possible.
#include "plans/rollout.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "modules/marker/marker.h"
#include "plans/drain_reason.h"
#include "plans/waivers.h"
#include "plans/report/plan_text.h"
#include "plans/window.h"

// Events are built with designated initializers naming only the fields that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace plumb::plans {
namespace {

using modules::Disruption;
using std::chrono::milliseconds;

// Thrown inside a node thread once the crash hook has fired: the process is "dead", nothing more
// may be written or done. Caught at the top of the thread; never leaves this file.
struct Dead {};

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n')) ++i;
  return s.substr(i);
}

std::string LastLine(const std::string& s) {
  std::string t = Trim(s);
  auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// "apply:nvidia_driver.install" -> "apply": the crash hook's and the events' step kind.
std::string StepKind(const std::string& step) { return step.substr(0, step.find(':')); }

struct StepResult {
  std::string outcome = "ok";   // "ok", "skipped", "failed", "interrupted", "stale"
  std::string error;
  nlohmann::json detail = nlohmann::json::object();
  static StepResult Ok(nlohmann::json d = nlohmann::json::object()) { return {"ok", "", std::move(d)}; }
  static StepResult Failed(std::string e) { return {"failed", std::move(e), nlohmann::json::object()}; }
  static StepResult Skipped(std::string why) {
    return {"skipped", "", nlohmann::json{{"why", std::move(why)}}};
  }
  static StepResult Interrupted() { return {"interrupted", "", nlohmann::json::object()}; }
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
  /// The node must still be out before `next` changes it: a drain the scheduler lost (a
  /// restart) is set again and its jobs waited for again. False when the node must stop here.
  bool StillOut(const std::string& next);
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
      const std::string& step, Clock::TimePoint start);
  /// Gives the node back to the pool for a later admission: "deferred", lease released, and a
  /// random pause to desynchronise from the run it collided with.
  void Defer(const std::string& why);
  bool ApplyAction(const PlannedAction& pa);
  bool Reboot();
  bool Verify();
  bool Health();
  bool Marker();
  bool ReturnToService();

  StepResult Step(const std::string& name, nlohmann::json detail,
                  const std::function<StepResult()>& fn);
  bool Check(const std::string& step, const StepResult& r);   // false: stop this node
  void Fail(const std::string& step, const std::string& error);
  void Interrupt(const std::string& step);
  bool Stopping() const;
  bool ContinueTo(const std::string& next);
  const StepRecord* Last(const std::string& step) const;
  void Put(const std::string& status, const std::string& error = {});

  modules::Drainer& Sched();
  enum class SchedRead { kOk, kUnknownNode, kGaveUp };
  /// This node as the scheduler sees it, waiting while the scheduler cannot be read (up to the
  /// policy's scheduler_timeout, then the run pauses); kGaveUp also when stopping.
  SchedRead ReadNode(const std::string& step, modules::SchedulerNode* out);
  /// Runs a scheduler write (drain, resume), waiting and retrying while the scheduler is
  /// unavailable; an error that is not "unavailable" is returned as it is.
  Status SchedulerCall(const std::string& step, const std::function<Status()>& call);
  /// A progress event (and the node's journal note) at most every timing.heartbeat.
  void Heartbeat(const std::string& step, Clock::TimePoint since, const std::string& what,
                 const std::string& status = {});
  /// "waiting for 1 job(s): 1234 (alice: train, 58m left); 1m30s of 4h"
  std::string WaitingFor(const modules::SchedulerNode& n, Clock::TimePoint since) const;
  Result<transport::Shell*> ShellNow();
  Result<std::string> ReadBootId();
  nlohmann::json Desired() const;
  /// Action ids the modules still want, from fresh facts; error text if facts are unusable.
  Result<std::vector<modules::Action>> Remaining(const NodeFacts& f) const;
  std::vector<modules::Action> WithoutWaived(std::vector<modules::Action> actions) const;
  std::chrono::milliseconds Backoff(std::chrono::milliseconds cur) const;

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

  // Shared with NodeRun.
  const Plan& plan() const { return plan_; }
  /// The commit applied (the markers'): the options', else the plan's.
  const std::string& Commit() const {
    return opts_.commit.empty() ? plan_.source.commit : opts_.commit;
  }
  const RolloutOptions& opts() const { return opts_; }
  RolloutDeps& deps() { return d_; }
  bool dead() const { return dead_.load(); }
  bool stopping() const { return (d_.stop && d_.stop->load()) || journal_broken_.load(); }
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
};

// ---------------------------------------------------------------------------------------------
// NodeRun

bool NodeRun::Stopping() const { return e_.stopping(); }

const StepRecord* NodeRun::Last(const std::string& step) const {
  for (auto it = prior_.rbegin(); it != prior_.rend(); ++it)
    if (it->step == step) return &*it;
  return nullptr;
}

void NodeRun::Put(const std::string& status, const std::string& error) {
  if (e_.dead()) throw Dead{};
  NodeRecord r;
  r.note = status == "running" ? note_ : std::string();
  r.run = e_.opts().run_id;
  r.node = np_.node;
  r.status = status;
  r.last_step = out_.step;
  r.admin_drained = admin_;
  r.admin_reason = admin_reason_;
  r.error = error;
  r.started_at = started_at_;
  if (status != "running") r.ended_at = e_.Now();
  if (Status s = e_.deps().journal->PutNode(r); !s) e_.JournalBroken(s.error());
}

StepResult NodeRun::Step(const std::string& name, nlohmann::json detail,
                         const std::function<StepResult()>& fn) {
  if (e_.dead()) throw Dead{};
  out_.step = name;
  StepRecord rec;
  rec.run = e_.opts().run_id;
  rec.node = np_.node;
  rec.step = name;
  rec.detail = detail;
  auto t0 = e_.deps().clock->Now();
  rec.started_at = Rfc3339(t0);
  // The intent is on disk before anything happens: if we die during the step, resume sees it.
  auto id = e_.deps().journal->StepIntent(rec);
  if (!id) {
    e_.JournalBroken(id.error());
    return StepResult::Interrupted();
  }
  const std::string kind = StepKind(name);
  if (e_.Crash(kind + ".intent")) throw Dead{};
  e_.Emit({.kind = RolloutEvent::Kind::kStep, .batch = batch_.index,
           .batches = static_cast<int>(e_.plan().batches.size()), .canary = batch_.canary,
           .node = np_.node, .step = name, .status = "start"});
  StepResult r;
  try {
    r = fn();
  } catch (const Dead&) {
    throw;
  } catch (const std::exception& ex) {
    r = StepResult::Failed(std::string("unexpected error: ") + ex.what());
  }
  if (e_.dead()) throw Dead{};
  if (e_.Crash(kind + ".outcome")) throw Dead{};
  auto t1 = e_.deps().clock->Now();
  const long long ms = MillisBetween(t0, t1);
  std::string journal_outcome = r.outcome == "stale" ? "skipped" : r.outcome;
  if (Status s = e_.deps().journal->StepOutcome(*id, journal_outcome, r.error, Rfc3339(t1), ms,
                                                r.detail);
      !s)
    e_.JournalBroken(s.error());
  e_.Emit({.kind = RolloutEvent::Kind::kStep, .batch = batch_.index,
           .batches = static_cast<int>(e_.plan().batches.size()), .canary = batch_.canary,
           .node = np_.node, .step = name, .status = r.outcome, .message = r.error,
           .elapsed_ms = ms});
  return r;
}

bool NodeRun::Check(const std::string& step, const StepResult& r) {
  if (r.outcome == "failed") {
    Fail(step, r.error);
    return false;
  }
  if (r.outcome == "interrupted") {
    Interrupt(step);
    return false;
  }
  return true;
}

void NodeRun::Fail(const std::string& step, const std::string& error) {
  out_.status = "failed";
  out_.step = step;
  out_.error = error;
  modules::Drainer& sched = Sched();
  {
    // Who holds the drain now. A drain call that reported an error may still have taken effect
    // (a timed-out scontrol), and a resumed run past its marker never drained in this process:
    // this run's reason makes the drain ours. An admin who drained it meanwhile keeps it, and
    // their reason (a later run must not take "RMA gpu3" for a failure of ours).
    auto q = sched.Query({np_.node});
    if (q)
      if (auto it = q->find(np_.node); it != q->end() && it->second.drain && !admin_) {
        if (RunOfReason(it->second.reason) == e_.opts().run_id) {
          drained_by_us_ = true;
        } else {
          drained_by_us_ = false;
          admin_ = true;
          admin_reason_ = it->second.reason;
        }
      }
  }
  if (drained_by_us_) {
    // Keep it out of service, and say why where an operator looks first: the scheduler
    // (`sinfo -R`): the step and the error's last line, not a command line cut at 200.
    const std::string reason = FailureReason(e_.opts().run_id, step, error);
    Status s = SchedulerCall("failed", [&] { return sched.Drain(np_.node, reason); });
    (void)s;   // the journal has the failure either way
    out_.left_drained = true;
  } else if (admin_) {
    out_.left_drained = true;   // as the admin left it, reason untouched
  }
  Put("failed", error);
  ReleaseLease();
}

void NodeRun::Interrupt(const std::string& step) {
  out_.status = "interrupted";
  out_.step = step;
  out_.left_drained = drained_by_us_ || admin_;
  Put("interrupted");
}

bool NodeRun::ContinueTo(const std::string& next) {
  if (e_.dead()) throw Dead{};
  if (auto to = e_.LeaseLostTo(np_.node)) {
    // Our lease expired (a long outage) and another run took the node: it is theirs now. It
    // may still carry our drain: say so, so someone returns it (--resume of this run does).
    lease_held_ = false;
    out_.step = next;
    out_.left_drained = drained_by_us_;
    Busy("lost its lease to run " + *to + " before " + next + "; left to that run" +
         (drained_by_us_ ? " (still drained by this run: plumb apply --resume " +
                               e_.opts().run_id + " returns it once that run is done)"
                         : ""));
    return false;
  }
  if (!Stopping()) return true;
  Interrupt(next);
  return false;
}

std::chrono::milliseconds NodeRun::Backoff(milliseconds cur) const {
  return std::min(cur * 2, e_.opts().timing.poll_max);
}

modules::Drainer& NodeRun::Sched() { return e_.DrainerFor(np_.rollout); }

void NodeRun::Heartbeat(const std::string& step, Clock::TimePoint since, const std::string& what,
                        const std::string& status) {
  const auto now = e_.deps().clock->Now();
  if (last_heartbeat_ && now - *last_heartbeat_ < e_.opts().timing.heartbeat) return;
  last_heartbeat_ = now;
  note_ = what;
  e_.Emit({.kind = RolloutEvent::Kind::kWait, .batch = batch_.index, .node = np_.node,
           .step = step, .status = status, .message = what,
           .elapsed_ms = MillisBetween(since, now)});
  Put("running");   // `plumb runs RUN` shows what it waits for
}

NodeRun::SchedRead NodeRun::ReadNode(const std::string& step, modules::SchedulerNode* out) {
  auto& sched = Sched();
  const auto start = e_.deps().clock->Now();
  const auto limit = std::chrono::seconds(policy_.scheduler_timeout_s);
  milliseconds wait = e_.opts().timing.poll_initial;
  for (;;) {
    auto q = sched.Query({np_.node});
    if (q) {
      auto it = q->find(np_.node);
      if (it == q->end()) return SchedRead::kUnknownNode;
      *out = it->second;
      return SchedRead::kOk;
    }
    if (e_.dead()) throw Dead{};
    if (Stopping()) return SchedRead::kGaveUp;
    const auto waited = e_.deps().clock->Now() - start;
    if (waited >= limit) {
      e_.SchedulerGaveUp(fmt::format("{} could not be read for {}s: {}", sched.Name(),
                                     policy_.scheduler_timeout_s, q.error().message));
      return SchedRead::kGaveUp;
    }
    Heartbeat(step, start,
              fmt::format("{} unavailable ({}); waiting up to {}s, nothing new starts meanwhile",
                          sched.Name(), q.error().message, policy_.scheduler_timeout_s),
              "scheduler");
    e_.deps().clock->Sleep(wait);
    wait = std::min(wait * 2, e_.opts().timing.scheduler_poll_max);
  }
}

Status NodeRun::SchedulerCall(const std::string& step, const std::function<Status()>& call) {
  const auto start = e_.deps().clock->Now();
  const auto limit = std::chrono::seconds(policy_.scheduler_timeout_s);
  milliseconds wait = e_.opts().timing.poll_initial;
  for (;;) {
    Status s = call();
    if (s || s.error().code != modules::kSchedulerUnavailable) return s;
    if (e_.dead()) throw Dead{};
    if (Stopping() || e_.deps().clock->Now() - start >= limit) {
      if (!Stopping())
        e_.SchedulerGaveUp(fmt::format("{} stayed unavailable for {}s: {}", Sched().Name(),
                                       policy_.scheduler_timeout_s, s.error().message));
      return s;
    }
    Heartbeat(step, start, fmt::format("{}; retrying", s.error().message), "scheduler");
    e_.deps().clock->Sleep(wait);
    wait = std::min(wait * 2, e_.opts().timing.scheduler_poll_max);
  }
}

void NodeRun::Busy(const std::string& why) {
  out_.status = "busy";
  out_.error = why;
  Put("busy", why);
  ReleaseLease();
}

bool NodeRun::Lease() {
  NodeLeases* leases = e_.deps().leases;
  if (!leases) return true;
  LeaseReply reply;
  LeaseHolder other;
  StepResult r = Step("lease", {{"ttl_s", e_.opts().timing.lease_ttl.count()}}, [&] {
    auto got = leases->Acquire(np_.node, e_.Me(), e_.opts().timing.lease_ttl);
    if (!got) {
      // A node plumb is already working on (resume) may be down mid-reboot: the lease it
      // holds from before is still there; the renewer keeps it and later steps re-check.
      if (touched_) return StepResult::Skipped("node unreachable: " + got.error().message);
      return StepResult::Failed("cannot take the node's lease: " + got.error().message);
    }
    reply = *got;
    other = got->other;
    nlohmann::json held = {{"run", other.run}, {"host", other.host}, {"pid", other.pid},
                           {"user", other.user}, {"expires", other.expires}};
    if (reply.kind == LeaseReply::Kind::kHeld) {
      StepResult s{"skipped", "", {{"held_by", held}}};
      return s;
    }
    if (reply.kind == LeaseReply::Kind::kTookOver) return StepResult::Ok({{"took_over_from", held}});
    return StepResult::Ok();
  });
  if (r.outcome == "ok") {
    lease_held_ = true;
    e_.HoldLease(np_.node);
    if (reply.kind == LeaseReply::Kind::kTookOver)
      e_.Emit({.kind = RolloutEvent::Kind::kNote, .node = np_.node,
               .message = fmt::format("took over the lease run {} (host {}, pid {}) let expire",
                                      other.run, other.host, other.pid)});
    return true;
  }
  if (r.outcome == "skipped" && r.detail.contains("held_by")) {
    Busy(fmt::format("leased by run {} (host {}, pid {}, user {}): another plumb run is working "
                     "on it; left alone", other.run, other.host, other.pid, other.user));
    return false;
  }
  if (r.outcome == "skipped") return true;   // resume, node unreachable: later steps decide
  return Check("lease", r);
}

void NodeRun::ReleaseLease() {
  if (!lease_held_ || !e_.deps().leases || e_.dead()) return;
  lease_held_ = false;
  e_.DropLease(np_.node);
  if (Status s = e_.deps().leases->Release(np_.node, e_.opts().run_id); !s)
    e_.Emit({.kind = RolloutEvent::Kind::kNote, .node = np_.node,
             .message = "could not release its lease (it expires by itself): " + s.error().message});
}

bool NodeRun::CheckActionsFollow(const NodeFacts& facts) {
  // The digest proves the plan file was not changed in transit, not that its actions are
  // what the commit asks: a re-sealed plan could carry other versions or parameters. With the
  // node's facts equal to the plan's, its modules must derive every planned action again.
  // Out-of-band modules (BMC) are not re-probed here; cmd/ checks their desired values against
  // the commit. An in-band module whose facts cannot be used stops the node: unchecked, it
  // would be changed on the plan's word alone.
  const nlohmann::json desired = Desired();
  std::set<std::string> mods;
  for (const PlannedAction& pa : np_.actions) mods.insert(pa.action.module);
  std::vector<modules::Action> derived;
  for (const std::string& name : mods) {
    const modules::Module* m = e_.deps().modules(name);
    if (!m) continue;   // ApplyAction says "no module" for it
    auto fit = facts.facts.find(name);
    if (m->HasBmcProbe() && fit == facts.facts.end()) continue;
    std::string why;
    if (auto err = facts.module_errors.find(name); err != facts.module_errors.end()) why = err->second;
    else if (fit == facts.facts.end()) why = "no facts from it";
    if (!why.empty()) {
      Fail("probe", fmt::format("cannot check the plan's {} actions against commit {}: {}", name,
                                e_.Commit().substr(0, 12), why));
      return false;
    }
    for (auto& a : m->Diff(desired, *fit)) derived.push_back(std::move(a));
  }
  derived = WithoutWaived(std::move(derived));
  for (const PlannedAction& pa : np_.actions) {
    const modules::Module* m = e_.deps().modules(pa.action.module);
    if (!m || (m->HasBmcProbe() && !facts.facts.contains(pa.action.module))) continue;
    auto same = std::find_if(derived.begin(), derived.end(), [&](const modules::Action& d) {
      return d.id == pa.action.id && d.after == pa.action.after && d.params == pa.action.params &&
             d.disruption == pa.action.disruption;
    });
    if (same == derived.end()) {
      Fail("probe", fmt::format("the plan's action {} ({}) does not follow from commit {} and "
                                "the node's facts: the plan file was edited; make a new plan",
                                pa.action.id, pa.action.summary,
                                e_.Commit().substr(0, 12)));
      return false;
    }
  }
  return true;
}

Result<transport::Shell*> NodeRun::ShellNow() {
  if (!shell_) {
    auto s = e_.deps().transport->Connect(np_.node);
    if (!s) return s.error();
    shell_ = std::move(*s);
  }
  return shell_.get();
}

Result<std::string> NodeRun::ReadBootId() {
  auto sh = ShellNow();
  if (!sh) return sh.error();
  auto r = (*sh)->Run("cat /proc/sys/kernel/random/boot_id", e_.opts().timing.command_timeout);
  if (!r) {
    shell_.reset();   // the connection is probably gone (rebooting): reconnect next time
    return r.error();
  }
  if (r->exit_status != 0)
    return Diagnostic::Error("apply.boot-id", "cannot read boot id: " + LastLine(r->err));
  return Trim(r->out);
}

nlohmann::json NodeRun::Desired() const {
  auto it = e_.opts().desired.find(np_.node);
  return it != e_.opts().desired.end() ? it->second : DesiredFromActions(np_);
}

Result<std::vector<modules::Action>> NodeRun::Remaining(const NodeFacts& f) const {
  if (!f.readable) return Diagnostic::Error("apply.unreadable", "cannot probe: " + f.unreadable_reason);
  const nlohmann::json desired = Desired();
  std::vector<modules::Action> left;
  std::set<std::string> mods;
  for (const auto& pa : np_.actions) mods.insert(pa.action.module);
  for (const auto& [name, facts] : f.facts.items()) mods.insert(name);
  for (const std::string& name : mods) {
    const modules::Module* m = e_.deps().modules(name);
    if (!m || !m->Wants(desired)) continue;
    if (auto err = f.module_errors.find(name); err != f.module_errors.end())
      return Diagnostic::Error("apply.probe", fmt::format("{} probe failed: {}", name, err->second));
    auto fit = f.facts.find(name);
    if (fit == f.facts.end())
      return Diagnostic::Error("apply.probe", fmt::format("no facts from module {}", name));
    for (auto& a : m->Diff(desired, *fit)) left.push_back(std::move(a));
  }
  return WithoutWaived(std::move(left));
}

std::vector<modules::Action> NodeRun::WithoutWaived(std::vector<modules::Action> actions) const {
  // A difference the plan shows as waived is the waiver owner's to keep: never "left to do",
  // split the way the planner split it (members of a map one by one).
  const NodeWaived* w = e_.plan().FindWaived(np_.node);
  if (!w) return actions;
  static const inventory::Waiver kPlanWaiver;
  return SplitWaived(std::move(actions), [&](const std::string& key) -> const inventory::Waiver* {
           for (const WaivedChange& c : w->changes)
             if (ActionKey(c.change.action) == key) return &kPlanWaiver;
           return nullptr;
         }).kept;
}

void NodeRun::Run() {
  started_at_ = e_.Now();
  if (prior_node_ && !prior_node_->started_at.empty()) started_at_ = prior_node_->started_at;
  if (prior_node_) {
    admin_ = prior_node_->admin_drained;
    admin_reason_ = prior_node_->admin_reason;
  }
  // Touched = plumb changed it, or holds it drained, in this run: then its facts differ
  // because of us and the stale check cannot apply. A lease, a probe, or a drain it gave
  // back (undrain: another claim on the budget was older) leave it untouched.
  for (const auto& s : prior_) {
    const std::string kind = StepKind(s.step);
    if (kind == "drain" && s.outcome != "failed" && s.outcome != "skipped") touched_ = true;
    if (kind == "undrain" && s.outcome == "ok") touched_ = false;
    if (kind == "apply" || kind == "reboot" || kind == "wait-boot" || kind == "verify" ||
        kind == "health" || kind == "marker" || kind == "resume")
      changed_ = touched_ = true;
  }
  touched_ = touched_ || adopted_;
  Put("running");
  e_.Emit({.kind = RolloutEvent::Kind::kNote, .batch = batch_.index, .node = np_.node,
           .message = touched_ ? "continuing" : "starting"});
  if (Steps()) {
    out_.status = "done";
    Put("done");
    ReleaseLease();
  }
}

bool NodeRun::Steps() {
  // 0. One writer per node: its lease, and no other plumb run's drain in progress on it.
  if (!Lease()) return false;
  if (!touched_) {
    modules::SchedulerNode sn;
    SchedRead got = ReadNode("lease", &sn);
    if (got == SchedRead::kGaveUp) {
      Interrupt("lease");
      return false;
    }
    if (got == SchedRead::kOk && sn.drain) {
      if (auto pr = ParsePlumbReason(sn.reason); pr && pr->run != e_.opts().run_id && !pr->failed) {
        Busy(fmt::format("drained by plumb run {} (reason '{}'), which has not finished with it; "
                         "left alone (that run continues with plumb apply --resume {})",
                         pr->run, sn.reason, pr->run));
        return false;
      }
    }
  }
  // 1. Stale check: the node must still be what the plan saw. Skipped once plumb has touched it
  //    (then its facts differ because of us); later steps re-check what they need.
  if (!touched_) {
    NodeFacts facts;
    StepResult r = Step("probe", {{"plan_digest", np_.facts_digest}}, [&] {
      facts = e_.deps().prober->Probe(np_.node);
      if (!facts.readable) return StepResult::Failed("unreachable: " + facts.unreadable_reason);
      if (facts.facts_digest != np_.facts_digest) {
        StepResult s{"stale", "", {{"digest", facts.facts_digest}}};
        return s;
      }
      return StepResult::Ok({{"digest", facts.facts_digest}});
    });
    if (r.outcome == "stale") {
      out_.status = "stale";
      out_.error = fmt::format("facts changed since the plan (plan {}, now {})",
                               np_.facts_digest.substr(0, 19),
                               r.detail.value("digest", std::string()).substr(0, 19));
      Put("stale", out_.error);
      ReleaseLease();
      return false;
    }
    if (!Check("probe", r)) return false;
    if (!CheckActionsFollow(facts)) return false;
    if (Status s = e_.deps().journal->SaveFacts(e_.opts().run_id, np_.node, "before",
                                                facts.facts_digest, facts.facts, e_.Now());
        !s)
      e_.JournalBroken(s.error());
  }
  // A node that got as far as its marker is changed and verified: only its return is left.
  if (const StepRecord* m = Last("marker"); m && m->outcome == "ok") {
    if (np_.NeedsDrain() || admin_) return ContinueTo("resume") && ReturnToService();
    return true;
  }
  // 2. Out of service.
  if (np_.NeedsDrain()) {
    if (!ContinueTo("drain") || !Drain()) return false;
  }
  // 3. The changes, in the plan's order, each on a node still out of service.
  for (const auto& pa : np_.actions) {
    const std::string step = "apply:" + pa.action.id;
    if (!ContinueTo(step)) return false;
    if (np_.NeedsDrain() && !StillOut(step)) return false;
    if (!ApplyAction(pa)) return false;
  }
  // 4. Reboot when any action needs one.
  if (np_.disruption >= Disruption::kReboot) {
    if (!ContinueTo("reboot") || !StillOut("reboot") || !Reboot()) return false;
  }
  // 5-8. Verify, gate, mark, return.
  if (!ContinueTo("verify") || !Verify()) return false;
  if (!ContinueTo("health") || !Health()) return false;
  if (!ContinueTo("marker") || !Marker()) return false;
  if (np_.NeedsDrain() || admin_) {
    if (!ContinueTo("resume") || !ReturnToService()) return false;
  }
  return true;
}

bool NodeRun::Drain() {
  auto& drainer = Sched();
  modules::SchedulerNode sn;
  switch (ReadNode("drain", &sn)) {
    case SchedRead::kGaveUp: Interrupt("drain"); return false;
    case SchedRead::kUnknownNode:
      Fail("drain", fmt::format("{} does not know node {}", drainer.Name(), np_.node));
      return false;
    case SchedRead::kOk: break;
  }
  // A claim this run left behind (its process killed between claim and drain, or before the
  // claim was cleared): cleared here, so no other run counts it after this node is back.
  if (sn.claim && sn.claim->run == e_.opts().run_id && !claimed_) {
    claimed_ = true;
    DropClaim(sn);
    sn.comment = modules::WithClaim(sn.comment, {});
    sn.claim.reset();
  }
  const bool ours = sn.drain && RunOfReason(sn.reason) == e_.opts().run_id;
  std::optional<PlumbReason> other;
  if (sn.drain && !ours) other = ParsePlumbReason(sn.reason);
  if (other && !other->failed) {
    // Another plumb run drained it and is not done with it: not an admin's drain, and not ours.
    Busy(fmt::format("drained by plumb run {} (reason '{}'), which has not finished with it; "
                     "left alone", other->run, sn.reason));
    return false;
  }
  std::string took_over;
  if (other && other->failed && !admin_) took_over = sn.reason;   // a failed run left it out
  if (!admin_ && !ours && took_over.empty() && (sn.drain || sn.DownOnPurpose())) {
    // Drained (or set down with a reason) before plumb came: remember it (durably) and leave
    // it to whoever took it out.
    admin_ = true;
    admin_reason_ = sn.reason;
    Put("running");
  }
  if (ours) drained_by_us_ = true;
  // A resumed run whose drain is in place but that changed nothing yet (a crash right after
  // the drain, or between a give-way and its resume call): the budget is checked again.
  if (ours && !changed_ && !admin_ && !BudgetHolds()) return false;
  if (!admin_ && !ours) {
    // A node already out (a failed run left it drained) costs no budget: no claim needed.
    if (took_over.empty() && !ClaimHolds(sn)) return false;
    // A node a failed plumb run left drained is taken over: relabelled with this run's reason,
    // so this run returns it to service once it converges (and says why if it fails again).
    const std::string reason = DrainReason(e_.opts().run_id, "drain");
    nlohmann::json detail = {{"reason", reason}, {"scheduler", std::string(drainer.Name())}};
    if (!took_over.empty()) detail["took_over_from"] = took_over;
    StepResult r = Step("drain", detail, [&] {
      Status s = SchedulerCall("drain", [&] { return drainer.Drain(np_.node, reason); });
      if (!s && s.error().code == modules::kSchedulerUnavailable) return StepResult::Interrupted();
      return s ? StepResult::Ok() : StepResult::Failed(s.error().message);
    });
    // Even a failed drain call may have taken effect: resume it on failure only if it did.
    if (r.outcome == "ok") drained_by_us_ = true;
    DropClaim(sn);   // the drain counts from here on (or there is no drain to count)
    if (!Check("drain", r)) return false;
    if (took_over.empty() && !BudgetHolds()) return false;
  }
  return WaitDrained();
}

bool NodeRun::Redrain(const modules::SchedulerNode& n) {
  // Our drain is gone (slurmctld restarted before it saved its state, say): the node is back
  // in service under plumb. Take it out again at once; the caller waits for its jobs again.
  e_.Emit({.kind = RolloutEvent::Kind::kNote, .node = np_.node,
           .message = fmt::format("{} no longer shows plumb's drain ({}); draining it again",
                                  Sched().Name(), n.state)});
  const std::string reason = DrainReason(e_.opts().run_id, "drain");
  Status s = SchedulerCall("drain", [&] { return Sched().Drain(np_.node, reason); });
  return s.ok();
}

std::optional<std::map<std::string, modules::SchedulerNode>> NodeRun::ReadScope(
    const std::string& step, Clock::TimePoint start) {
  const std::vector<std::string> scope = e_.ScopeOf(np_.rollout);
  const auto patience = std::chrono::seconds(policy_.scheduler_timeout_s);
  milliseconds wait = e_.opts().timing.poll_initial;
  for (;;) {
    auto q = Sched().Query(scope);
    if (q) return std::move(*q);
    if (e_.dead()) throw Dead{};
    if (Stopping() || e_.deps().clock->Now() - start >= patience) {
      if (!Stopping())
        e_.SchedulerGaveUp(fmt::format("{} could not be read for {}s: {}", Sched().Name(),
                                       policy_.scheduler_timeout_s, q.error().message));
      Interrupt(step);
      return std::nullopt;
    }
    Heartbeat(step, start, fmt::format("{} unavailable ({}): cannot count who is out",
                                       Sched().Name(), q.error().message), "scheduler");
    e_.deps().clock->Sleep(wait);
    wait = std::min(wait * 2, e_.opts().timing.scheduler_poll_max);
  }
}

bool NodeRun::ClaimHolds(const modules::SchedulerNode& sn) {
  modules::Drainer& sched = Sched();
  if (!sched.SharesClaims()) return true;
  const int limit = policy_.MaxUnavailable(static_cast<int>(e_.ScopeOf(np_.rollout).size()));
  const auto start = e_.deps().clock->Now();
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                            start.time_since_epoch()).count();
  const modules::NodeClaim mine{e_.opts().run_id, now_s};
  e_.SetClaimedNow(np_.node, true);
  StepResult r = Step("claim", {{"scheduler", std::string(sched.Name())}}, [&] {
    Status s = SchedulerCall("claim", [&] { return sched.SetClaim(sn, mine); });
    if (!s && s.error().code == modules::kSchedulerUnavailable) return StepResult::Interrupted();
    return s ? StepResult::Ok() : StepResult::Failed(s.error().message);
  });
  claimed_ = r.outcome == "ok";
  if (!claimed_) e_.SetClaimedNow(np_.node, false);
  if (!Check("claim", r)) return false;
  milliseconds wait = e_.opts().timing.poll_initial;
  const auto patience = std::chrono::seconds(policy_.scheduler_timeout_s);
  for (;;) {
    auto q = ReadScope("claim", start);
    if (!q) {
      DropClaim(sn);
      return false;
    }
    // Everything that is out, or about to be: nodes out for any reason, and every live claim
    // (this run's other nodes' too: they were admitted against the same count).
    int taken = 1;   // this node
    std::vector<std::string> who, unsettled;
    for (const auto& [name, n] : *q) {
      if (name == np_.node) continue;
      const bool claimed = n.claim && ClaimLive(*n.claim, now_s) &&
                           (n.claim->run != e_.opts().run_id || e_.ClaimedNow(name));
      if (!n.Unavailable() && !claimed) continue;
      ++taken;
      if (n.Unavailable() && n.Unsettled()) unsettled.push_back(name);
      who.push_back(!n.Unavailable() && n.claim->run != e_.opts().run_id
                        ? fmt::format("{} (claimed by run {})", name, n.claim->run)
                        : name);
    }
    if (taken <= limit) return true;
    // Over only because the scheduler has not heard from some nodes (a restart): wait for
    // them as long as for an unreadable scheduler, nothing changing here.
    const bool only_unsettled = taken - static_cast<int>(unsettled.size()) <= limit;
    if (only_unsettled && e_.deps().clock->Now() - start < patience && !Stopping()) {
      if (e_.dead()) throw Dead{};
      Heartbeat("claim", start,
                fmt::format("{} has not heard from {} (not responding): cannot count them yet; "
                            "waiting up to {}s", sched.Name(), fmt::join(unsettled, ", "),
                            policy_.scheduler_timeout_s),
                "scheduler");
      e_.deps().clock->Sleep(wait);
      wait = std::min(wait * 2, e_.opts().timing.scheduler_poll_max);
      continue;
    }
    DropClaim(sn);
    if (Stopping()) {
      Interrupt("claim");
      return false;
    }
    Defer(fmt::format("{} node(s) out or claimed in its scope with this one, max_unavailable "
                      "{}: {}; not drained, to be admitted later",
                      taken, limit, fmt::join(who, ", ")));
    return false;
  }
}

void NodeRun::DropClaim(const modules::SchedulerNode& sn) {
  if (!claimed_) return;
  claimed_ = false;
  e_.SetClaimedNow(np_.node, false);
  // One try, no waiting: a claim left behind only holds a slot until it expires.
  if (Status s = Sched().SetClaim(sn, modules::NodeClaim{}); !s)
    e_.Emit({.kind = RolloutEvent::Kind::kNote, .node = np_.node,
             .message = fmt::format("could not clear its claim ({}); it expires within {}s",
                                    s.error().message, modules::kClaimTtlSeconds)});
}

void NodeRun::Defer(const std::string& why) {
  out_.status = "deferred";
  out_.error = why;
  Put("running");
  ReleaseLease();
  // Desynchronise from the other run, which is counting the same nodes right now.
  static thread_local std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> jitter(500, 3000);
  e_.deps().clock->Sleep(milliseconds(jitter(rng)));
}

bool NodeRun::BudgetHolds() {
  const std::vector<std::string> scope = e_.ScopeOf(np_.rollout);
  const int limit = policy_.MaxUnavailable(static_cast<int>(scope.size()));
  const auto start = e_.deps().clock->Now();
  const auto patience = std::chrono::seconds(policy_.scheduler_timeout_s);
  milliseconds wait = e_.opts().timing.poll_initial;
  std::optional<std::map<std::string, modules::SchedulerNode>> q;
  int out = 0, older = 0;
  std::vector<std::string> who;
  for (;;) {
    q = ReadScope("drain", start);   // drained, nothing changed: --resume checks again
    if (!q) return false;
    int64_t mine = 0;
    if (auto it = q->find(np_.node); it != q->end()) mine = it->second.reason_since;
    out = 0, older = 0;
    who.clear();
    std::vector<std::string> unsettled;
    for (const auto& [name, n] : *q) {
      if (!n.Unavailable()) continue;
      ++out;
      if (name == np_.node) continue;
      auto pr = n.drain ? ParsePlumbReason(n.reason) : std::nullopt;
      // Out for any other reason (an admin, down, a failed run): there before any claim. A
      // claim of the same second, or of an unknown time, counts as older too: on a tie both
      // runs give way (and retry after a random delay) rather than both holding.
      const bool claim = pr && !pr->failed;
      if (!claim || mine == 0 || n.reason_since == 0 || n.reason_since <= mine) {
        ++older;
        who.push_back(claim ? fmt::format("{} (run {})", name, pr->run) : name);
        if (n.Unsettled()) unsettled.push_back(name);
      }
    }
    if (out <= limit || older < limit) return true;
    // Over only because the scheduler has not heard from some nodes (every node, for a while
    // after slurmctld restarts): that may clear by itself. Wait for it, nothing changing here,
    // as long as for an unreadable scheduler; then they count as out.
    const bool only_unsettled = older - static_cast<int>(unsettled.size()) < limit;
    if (!only_unsettled || e_.deps().clock->Now() - start >= patience) break;
    if (e_.dead()) throw Dead{};
    if (Stopping()) {
      Interrupt("drain");
      return false;
    }
    Heartbeat("drain", start,
              fmt::format("{} has not heard from {} (not responding): cannot count them yet; "
                          "waiting up to {}s", Sched().Name(), fmt::join(unsettled, ", "),
                          policy_.scheduler_timeout_s),
              "scheduler");
    e_.deps().clock->Sleep(wait);
    wait = std::min(wait * 2, e_.opts().timing.scheduler_poll_max);
  }
  const std::string why = fmt::format(
      "{} node(s) out in its scope, max_unavailable {}: {} took nodes out meanwhile; returned to "
      "service untouched, to be admitted later", out, limit, fmt::join(who, ", "));
  // Give the drain back, but only the drain that is still ours.
  auto me = q->find(np_.node);
  const bool still_ours = me != q->end() && me->second.drain &&
                          RunOfReason(me->second.reason) == e_.opts().run_id;
  StepResult r = Step("undrain", {{"why", why}}, [&] {
    if (!still_ours) return StepResult::Skipped("not drained by this run any more");
    Status s = SchedulerCall("undrain", [&] { return Sched().Resume(np_.node); });
    if (s) return StepResult::Ok();
    // The node is untouched either way: giving the drain back can never fail it. A refusal
    // (Slurm's "Invalid node state specified" for a node it has not heard from since it
    // restarted) leaves our drain in place, and --resume gives it back or goes on.
    if (s.error().code != modules::kSchedulerUnavailable) {
      e_.Emit({.kind = RolloutEvent::Kind::kNote, .node = np_.node,
               .message = fmt::format("could not give its drain back ({}); left drained by this "
                                      "run, untouched", s.error().message)});
    }
    return StepResult::Interrupted();
  });
  if (!Check("undrain", r)) return false;
  drained_by_us_ = false;
  Defer(why);
  return false;
}

bool NodeRun::StillOut(const std::string& next) {
  if (!drained_by_us_ || admin_) return true;
  modules::SchedulerNode n;
  SchedRead got = ReadNode(next, &n);
  if (got == SchedRead::kGaveUp) {
    Interrupt(next);
    return false;
  }
  if (got != SchedRead::kOk || n.drain || n.down) return true;
  if (!Redrain(n)) {
    Interrupt(next);   // the scheduler went away again: the node stays as it is, resumable
    return false;
  }
  return WaitDrained();   // a job may have started on it meanwhile
}

bool NodeRun::WaitDrained() {
  // Wait until no job runs there. "drained" alone is not enough: a node whose job is still
  // PENDING shows drained at once (testbed gotcha 9), so the running-job count must be zero.
  const auto timeout = std::chrono::seconds(policy_.drain_timeout_s);
  StepResult w = Step("wait-drained", {{"timeout_s", policy_.drain_timeout_s}}, [&] {
    auto start = e_.deps().clock->Now();
    milliseconds wait = e_.opts().timing.poll_initial;
    std::string last;
    for (;;) {
      // ReadNode waits out an unreadable scheduler (and pauses the run past its timeout):
      // jobs the scheduler cannot show are not jobs that ended.
      modules::SchedulerNode n;
      SchedRead got = ReadNode("wait-drained", &n);
      if (got == SchedRead::kGaveUp) return StepResult::Interrupted();
      if (got == SchedRead::kOk) {
        // Drained, or set down on purpose by an admin (no drain flag, and no job can run).
        if ((n.drained || n.DownOnPurpose()) && n.running_jobs == 0)
          return StepResult::Ok({{"waited_ms", MillisBetween(start, e_.deps().clock->Now())}});
        if (!n.drain && !n.DownOnPurpose() && drained_by_us_ && !admin_ && !Redrain(n))
          return StepResult::Interrupted();   // the scheduler went away again meanwhile
        last = n.jobs.empty() ? n.state : fmt::format("{}", fmt::join(n.jobs, ", "));
        Heartbeat("wait-drained", start, WaitingFor(n, start));
      }
      if (e_.dead()) throw Dead{};
      if (Stopping()) return StepResult::Interrupted();
      if (e_.deps().clock->Now() - start >= timeout)
        return StepResult::Failed(fmt::format("drain timeout after {}s, still running: {}",
                                              policy_.drain_timeout_s, last));
      e_.deps().clock->Sleep(wait);
      wait = Backoff(wait);
    }
  });
  note_.clear();
  return Check("wait-drained", w);
}

std::string NodeRun::WaitingFor(const modules::SchedulerNode& n, Clock::TimePoint since) const {
  const auto now = e_.deps().clock->Now();
  const long long now_unix =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  std::vector<std::string> jobs;
  for (const modules::SchedulerJob& j : n.job_details) {
    std::string left = j.end_unix <= 0 ? "no time limit"
                       : j.end_unix <= now_unix
                           ? "past its time limit"
                           : report::FormatDuration(static_cast<int>(j.end_unix - now_unix)) + " left";
    jobs.push_back(fmt::format("{} ({}: {}, {})", j.id, j.user, j.name, left));
  }
  if (jobs.empty())
    for (const std::string& j : n.jobs) jobs.push_back(j);
  const int elapsed = static_cast<int>(MillisBetween(since, now) / 1000);
  std::string what = jobs.empty() ? fmt::format("waiting for the node to drain ({})", n.state)
                                   : fmt::format("waiting for {} job(s): {}", jobs.size(),
                                                 fmt::join(jobs, ", "));
  return fmt::format("{}; {} of {}", what, report::FormatDuration(elapsed),
                     report::FormatDuration(policy_.drain_timeout_s));
}

bool NodeRun::ApplyAction(const PlannedAction& pa) {
  const modules::Action& a = pa.action;
  const std::string step = "apply:" + a.id;
  const StepRecord* last = Last(step);
  if (last && (last->outcome == "ok" || last->outcome == "skipped")) return true;
  const modules::Module* m = e_.deps().modules(a.module);
  if (!m) {
    Fail(step, fmt::format("no module '{}' in this plumb", a.module));
    return false;
  }
  // An intent with no outcome: the action may or may not have happened. Look before redoing.
  const bool recheck = adopted_ || (last && (last->outcome.empty() || last->outcome == "interrupted"));
  if (recheck) {
    NodeFacts f = e_.deps().prober->Probe(np_.node);
    auto left = Remaining(f);
    if (left) {
      bool needed = std::any_of(left->begin(), left->end(),
                                [&](const modules::Action& x) { return x.id == a.id; });
      if (!needed) {
        StepResult r = Step(step, {{"summary", a.summary}, {"recheck", true}},
                            [] { return StepResult::Skipped("already applied (re-probed)"); });
        return Check(step, r);
      }
    }
  }
  StepResult r = Step(step, {{"summary", a.summary}, {"module", a.module}}, [&] {
    auto sh = ShellNow();
    modules::NodeContext ctx;
    const inventory::Node* node = e_.opts().cluster ? e_.opts().cluster->FindNode(np_.node) : nullptr;
    inventory::Node stand_in;
    stand_in.name = np_.node;
    ctx.node = node ? node : &stand_in;
    ctx.shell = sh ? *sh : nullptr;
    ctx.bmc = e_.deps().transport->Bmc(np_.node);
    const modules::ApplyOutcome o = m->Apply(ctx, a);
    if (!o.ok()) {
      shell_.reset();   // whatever broke, start the next step on a fresh connection
      return StepResult::Failed(o.error().message);
    }
    // What the module did goes to the journal: "staged" (a BIOS setting waits for the reset
    // this node's plan includes), "nothing-to-do" (it was already so).
    return StepResult::Ok({{"outcome", modules::ApplyOutcomeName(o.kind)}, {"said", o.message}});
  });
  return Check(step, r);
}

bool NodeRun::Reboot() {
  if (const StepRecord* wb = Last("wait-boot"); wb && wb->outcome == "ok") return true;
  const auto& t = e_.opts().timing;
  std::string old_id;
  bool issue = true;
  if (const StepRecord* rb = Last("reboot"); rb && rb->outcome != "failed") {
    // A reboot was journaled before the crash. Did it happen, or is it still on its way?
    old_id = rb->detail.value("boot_id", std::string());
    auto since = ParseRfc3339(rb->started_at).value_or(e_.deps().clock->Now());
    milliseconds wait = t.poll_initial;
    // No boot id from before (ssh was down, so it went through the BMC), and the BMC took the
    // power cycle: the boot id cannot tell whether it happened yet, and a second power cycle
    // of a node that is booting is worse than waiting. wait-boot takes any boot id.
    if (old_id.empty() && rb->outcome == "ok") issue = false;
    // Not known whether the call went out: if the node runs the planned changes, it rebooted.
    if (issue && old_id.empty() && ReadBootId()) {
      auto left = Remaining(e_.deps().prober->Probe(np_.node));
      if (left && left->empty()) return true;
    }
    while (issue) {
      auto cur = ReadBootId();
      if (!cur || (!old_id.empty() && *cur != old_id)) {
        issue = false;   // down (rebooting) or already back with a new id
        break;
      }
      if (e_.deps().clock->Now() - since >= t.reboot_grace) break;   // it never happened
      if (Stopping()) {
        Interrupt("reboot");
        return false;
      }
      e_.deps().clock->Sleep(wait);
      wait = std::min(Backoff(wait), milliseconds(1000));
    }
  }
  if (issue && adopted_ && !Last("reboot")) {
    // No record of this node (a lost journal): if it already verifies, the reboot happened.
    auto left = Remaining(e_.deps().prober->Probe(np_.node));
    if (left && left->empty()) return true;
  }
  if (issue) {
    // The lease must outlast the reboot: nobody renews it while the node is down.
    if (lease_held_ && e_.deps().leases)
      (void)e_.deps().leases->Renew(np_.node, e_.Me(), t.reboot_timeout + e_.opts().timing.lease_ttl);
    auto id = ReadBootId();
    const bool bmc = np_.disruption >= Disruption::kFirmwareFlash || !id;
    if (id) old_id = *id;
    StepResult r = Step("reboot", {{"boot_id", old_id}, {"via", bmc ? "bmc" : "ssh"}}, [&] {
      if (bmc) {
        Status s = e_.deps().transport->PowerCycle(np_.node);
        return s ? StepResult::Ok() : StepResult::Failed("BMC reset: " + s.error().message);
      }
      auto sh = ShellNow();
      if (!sh) return StepResult::Failed("ssh: " + sh.error().message);
      // Fire and forget: the connection may die under us, which is what a reboot looks like.
      auto out = (*sh)->Run("reboot", std::min(t.command_timeout, milliseconds(30000)));
      shell_.reset();
      if (out && out->exit_status != 0)
        return StepResult::Failed(fmt::format("reboot exited {}: {}", out->exit_status,
                                              LastLine(out->err)));
      return StepResult::Ok();
    });
    if (!Check("reboot", r)) return false;
  }
  StepResult w = Step("wait-boot", {{"old_boot_id", old_id}, {"timeout_s", t.reboot_timeout.count()}},
                      [&] {
    auto start = e_.deps().clock->Now();
    milliseconds wait = t.poll_initial;
    std::string last = "boot id unchanged";
    for (;;) {
      shell_.reset();
      auto cur = ReadBootId();
      if (cur && *cur != old_id && !cur->empty())
        return StepResult::Ok({{"boot_id", *cur},
                               {"waited_ms", MillisBetween(start, e_.deps().clock->Now())}});
      if (!cur) last = "unreachable: " + cur.error().message;
      if (e_.dead()) throw Dead{};
      if (Stopping()) return StepResult::Interrupted();
      if (e_.deps().clock->Now() - start >= t.reboot_timeout)
        return StepResult::Failed(fmt::format("no new boot id after {}s ({})",
                                              t.reboot_timeout.count(), last));
      e_.deps().clock->Sleep(wait);
      wait = std::min(Backoff(wait), milliseconds(2000));
    }
  });
  return Check("wait-boot", w);
}

bool NodeRun::Verify() {
  NodeFacts facts;
  StepResult r = Step("verify", {}, [&] {
    facts = e_.deps().prober->Probe(np_.node);
    auto left = Remaining(facts);
    if (!left) return StepResult::Failed(left.error().message);
    if (!left->empty()) {
      std::vector<std::string> what;
      for (const auto& a : *left) what.push_back(a.summary.empty() ? a.id : a.summary);
      return StepResult::Failed("still differs after apply: " + fmt::format("{}", fmt::join(what, "; ")));
    }
    return StepResult::Ok({{"digest", facts.facts_digest}});
  });
  if (r.outcome == "ok") {
    if (Status s = e_.deps().journal->SaveFacts(e_.opts().run_id, np_.node, "after",
                                                facts.facts_digest, facts.facts, e_.Now());
        !s)
      e_.JournalBroken(s.error());
  }
  return Check("verify", r);
}

bool NodeRun::Health() {
  const auto timeout = std::chrono::seconds(policy_.health_timeout_s);
  for (size_t i = 0; i < policy_.health.size(); ++i) {
    const std::string& cmd = policy_.health[i];
    const std::string step = fmt::format("health:{}", i + 1);
    StepResult r = Step(step, {{"command", cmd}}, [&] {
      auto sh = ShellNow();
      if (!sh) return StepResult::Failed("ssh: " + sh.error().message);
      auto out = (*sh)->Run(cmd, timeout);
      if (!out) {
        shell_.reset();
        return StepResult::Failed(fmt::format("health gate '{}': {}", cmd, out.error().message));
      }
      if (out->exit_status != 0)
        return StepResult::Failed(fmt::format("health gate '{}' exited {}: {}", cmd,
                                              out->exit_status, LastLine(out->err + "\n" + out->out)));
      return StepResult::Ok();
    });
    if (!Check(step, r)) return false;
  }
  return true;
}

bool NodeRun::Marker() {
  StepResult r = Step("marker", {}, [&] {
    auto sh = ShellNow();
    if (!sh) return StepResult::Failed("ssh: " + sh.error().message);
    static const modules::marker::MarkerModule kMarker;
    modules::NodeContext ctx;
    inventory::Node stand_in;
    stand_in.name = np_.node;
    ctx.node = &stand_in;
    ctx.shell = *sh;
    ctx.command_timeout = e_.opts().timing.command_timeout;
    const modules::ApplyOutcome o = kMarker.Apply(
        ctx, modules::marker::WriteAction(e_.Commit(), e_.opts().run_id, e_.Now()));
    if (!o.ok()) {
      shell_.reset();
      return StepResult::Failed("writing the marker: " + o.error().message);
    }
    return StepResult::Ok();
  });
  return Check("marker", r);
}

bool NodeRun::ReturnToService() {
  auto& drainer = Sched();
  if (admin_) {
    StepResult r = Step("resume", {{"admin_reason", admin_reason_}}, [&] {
      return StepResult::Skipped("left drained: drained before plumb (" + admin_reason_ + ")");
    });
    out_.left_drained = true;
    const bool ok = Check("resume", r);
    if (ok) ReleaseLease();
    return ok;
  }
  StepResult r = Step("resume", {}, [&] {
    // After a reboot the scheduler may still see the node as down until its daemon registers
    // again; resuming before that would be undone or refused.
    auto start = e_.deps().clock->Now();
    milliseconds wait = e_.opts().timing.poll_initial;
    for (;;) {
      modules::SchedulerNode n;
      SchedRead got = ReadNode("resume", &n);
      if (got == SchedRead::kGaveUp) return StepResult::Interrupted();
      if (got == SchedRead::kOk) {
        if (!n.drain && !n.down) return StepResult::Skipped("already in service");
        if (n.drain && RunOfReason(n.reason) != e_.opts().run_id) {
          drained_by_us_ = false;   // not ours to resume, nor to re-label
          admin_ = true;
          admin_reason_ = n.reason;
          return StepResult::Skipped("left drained: drained by someone else meanwhile (" +
                                     n.reason + ")");
        }
        if (!n.down) break;
        Heartbeat("resume", start, fmt::format("waiting for {} to see the node up ({})",
                                               drainer.Name(), n.state));
      }
      if (e_.dead()) throw Dead{};
      if (Stopping()) return StepResult::Interrupted();
      if (e_.deps().clock->Now() - start >= e_.opts().timing.resume_timeout)
        return StepResult::Failed(fmt::format("{} still sees it down after {}s", drainer.Name(),
                                              e_.opts().timing.resume_timeout.count()));
      e_.deps().clock->Sleep(wait);
      wait = std::min(Backoff(wait), milliseconds(2000));
    }
    Status s = SchedulerCall("resume", [&] { return drainer.Resume(np_.node); });
    if (!s && s.error().code == modules::kSchedulerUnavailable) return StepResult::Interrupted();
    if (!s) return StepResult::Failed(s.error().message);
    // Done only once the scheduler agrees: right after a resume Slurm shows the node as
    // not responding for a moment, and the next batch must not count it as out.
    wait = e_.opts().timing.poll_initial;
    for (;;) {
      auto q = drainer.Query({np_.node});
      if (q) {
        auto n = q->find(np_.node);
        if (n == q->end() || !n->second.Unavailable()) return StepResult::Ok();
      }
      if (e_.dead()) throw Dead{};
      if (e_.deps().clock->Now() - start >= e_.opts().timing.resume_timeout)
        return StepResult::Ok({{"note", "resumed; the scheduler still shows it unavailable"}});
      e_.deps().clock->Sleep(wait);
      wait = std::min(Backoff(wait), milliseconds(1000));
    }
  });
  if (r.outcome == "ok" || (r.outcome == "skipped" && !admin_)) returned_ = true;
  if (admin_) out_.left_drained = true;
  const bool ok = Check("resume", r);
  if (ok) ReleaseLease();
  return ok;
}

// ---------------------------------------------------------------------------------------------
// Engine

std::vector<std::string> Engine::ScopeOf(const std::string& rollout) const {
  if (auto it = opts_.scope.find(rollout); it != opts_.scope.end()) return it->second;
  std::set<std::string> s(plan_.in_sync.begin(), plan_.in_sync.end());
  for (const auto& n : plan_.nodes)
    if (n.rollout == rollout) s.insert(n.node);
  return {s.begin(), s.end()};
}

void Engine::MarkNotStarted(const std::string& node) {
  NodeOutcome o;
  o.node = node;
  o.status = "not-started";
  outcomes_[node] = o;
  if (dead()) return;
  NodeRecord r;
  r.run = opts_.run_id;
  r.node = node;
  r.status = "not-started";
  (void)d_.journal->PutNode(r);
  Emit({.kind = RolloutEvent::Kind::kNodeEnd, .node = node, .status = "not-started"});
}

Result<std::map<std::string, modules::SchedulerNode>> Engine::ReadScheduler(
    modules::Drainer& drainer, const std::vector<std::string>& scope,
    const inventory::RolloutPolicy& policy) {
  const auto start = d_.clock->Now();
  const auto limit = std::chrono::seconds(policy.scheduler_timeout_s);
  milliseconds wait = opts_.timing.poll_initial;
  std::optional<Clock::TimePoint> said;
  for (;;) {
    auto q = drainer.Query(scope);
    if (q) return q;
    if (dead() || stopping()) return q.error();
    const auto now = d_.clock->Now();
    if (now - start >= limit) {
      SchedulerGaveUp(fmt::format("{} could not be read for {}s: {}", drainer.Name(),
                                  policy.scheduler_timeout_s, q.error().message));
      return q.error();
    }
    if (!said || now - *said >= opts_.timing.heartbeat) {
      said = now;
      Emit({.kind = RolloutEvent::Kind::kWait, .status = "scheduler",
            .message = fmt::format("{} unavailable ({}); admitting nothing, waiting up to {}s",
                                   drainer.Name(), q.error().message, policy.scheduler_timeout_s),
            .elapsed_ms = MillisBetween(start, now)});
    }
    d_.clock->Sleep(wait);
    wait = std::min(wait * 2, opts_.timing.scheduler_poll_max);
  }
}

void Engine::RenewLeases(const std::atomic<bool>& done) {
  if (!d_.leases) return;
  // Real time, not the engine's Clock: a lease expires in the node's real clock, and a fake
  // clock advanced by this thread's sleeps would hurry every other wait of a test.
  for (;;) {
    {
      std::unique_lock lock(lease_mu_);
      lease_cv_.wait_for(lock, opts_.timing.lease_renew, [&] { return done.load() || dead(); });
    }
    if (done.load() || dead()) return;
    std::vector<std::string> nodes;
    {
      std::lock_guard lock(lease_mu_);
      nodes.assign(leases_held_.begin(), leases_held_.end());
    }
    // In parallel (a few at a time): one node that answers slowly (rebooting, a 60 s timeout)
    // must not hold the others' renewals past their expiry.
    std::atomic<size_t> next{0};
    auto renew = [&] {
      for (size_t i = next++; i < nodes.size() && !done.load() && !dead(); i = next++) {
        const std::string& n = nodes[i];
        auto r = d_.leases->Renew(n, Me(), opts_.timing.lease_ttl);
        // Unreachable (rebooting): the lease written before the reboot covers the reboot.
        if (!r || r->kind != LeaseReply::Kind::kLost) continue;
        std::lock_guard lock(lease_mu_);
        if (!leases_held_.count(n)) continue;   // released meanwhile: nothing was lost
        leases_lost_[n] = r->other.run.empty() ? std::string("(none: the lease was removed)")
                                               : r->other.run;
      }
    };
    std::vector<std::thread> workers;
    for (size_t w = 0; w < std::min<size_t>(16, nodes.size()); ++w) workers.emplace_back(renew);
    for (auto& t : workers) t.join();
  }
}

std::string Engine::Summary() const {
  std::map<std::string, int> count;
  std::string first_failure;
  for (const auto& [name, o] : outcomes_) {
    ++count[o.status];
    if (o.status == "failed" && first_failure.empty())
      first_failure = fmt::format("{} at {}: {}", name, o.step, o.error);
  }
  std::vector<std::string> parts;
  for (const char* s : {"done", "failed", "stale", "busy", "interrupted", "not-started"})
    if (count[s]) parts.push_back(fmt::format("{} {}", count[s], s));
  std::string line = parts.empty() ? "nothing to do" : fmt::format("{}", fmt::join(parts, ", "));
  if (!first_failure.empty()) line += " (first failure: " + first_failure + ")";
  return line;
}

RolloutResult Engine::Run() {
  RolloutResult res;
  res.run = opts_.run_id;

  // What an earlier attempt of this run already did.
  std::map<std::string, NodeRecord> prior_nodes;
  std::map<std::string, std::vector<StepRecord>> prior_steps;
  if (opts_.resume) {
    auto nodes = d_.journal->Nodes(opts_.run_id);
    auto steps = d_.journal->Steps(opts_.run_id);
    if (!nodes || !steps) {
      res.outcome = "failed";
      res.diags.Add(!nodes ? nodes.error() : steps.error());
      return res;
    }
    for (auto& n : *nodes) prior_nodes[n.node] = n;
    for (auto& s : *steps) prior_steps[s.node].push_back(s);
  }
  const std::set<std::string> adopt(opts_.adopt.begin(), opts_.adopt.end());
  for (const auto& [name, n] : prior_nodes) {
    if (n.status == "done" || n.status == "failed" || n.status == "stale") {
      NodeOutcome o;
      o.node = name;
      o.status = n.status;
      o.step = n.last_step;
      o.error = n.error;
      outcomes_[name] = o;
      if (n.status == "failed") ++failures_;
    }
  }

  std::atomic<bool> renew_done{false};
  std::thread renewer([this, &renew_done] { RenewLeases(renew_done); });
  struct JoinRenewer {
    Engine& e;
    std::atomic<bool>& done;
    std::thread& t;
    ~JoinRenewer() {
      done = true;
      e.StopRenewing();
      t.join();
    }
  } join_renewer{*this, renew_done, renewer};

  int total = 0;
  for (const auto& b : plan_.batches) total += static_cast<int>(b.nodes.size());
  Emit({.kind = RolloutEvent::Kind::kRunStart,
        .batches = static_cast<int>(plan_.batches.size()),
        .message = fmt::format("{} {} node(s) in {} batch(es), commit {}",
                               opts_.resume ? "continuing" : "applying", total,
                               plan_.batches.size(), Commit().substr(0, 12))});

  std::string halt_reason;
  bool paused = false;
  std::string next_window;
  for (const Batch& b : plan_.batches) {
    std::vector<std::string> todo;
    for (const auto& n : b.nodes)
      if (!outcomes_.count(n)) todo.push_back(n);
    // A canary that failed in an earlier attempt of this run (halted, interrupted, crashed)
    // still stops the rollout on --resume: the rest of the fleet must not follow it.
    if (b.canary && halt_reason.empty())
      for (const auto& n : b.nodes)
        if (auto o = outcomes_.find(n); o != outcomes_.end() && o->second.status == "failed")
          halt_reason = fmt::format("the canary batch failed ({} failed)", n);
    if (todo.empty()) continue;
    const inventory::RolloutPolicy* pp = PolicyFor(b.rollout);
    if (!pp && halt_reason.empty())
      halt_reason = fmt::format("the plan has no rollout policy '{}'", b.rollout);
    auto window = pp ? Window::Make(pp->window_cron, pp->window_duration_s) : Result<Window>(Window());
    if (!window && halt_reason.empty()) halt_reason = window.error().message;
    if (!halt_reason.empty() || paused || stopping() || dead() || scheduler_down()) {
      if (!dead())
        for (const auto& n : todo) MarkNotStarted(n);
      continue;
    }
    const inventory::RolloutPolicy& policy = *pp;
    modules::Drainer& drainer = DrainerFor(b.rollout);
    const std::vector<std::string> scope = ScopeOf(b.rollout);
    const int limit = policy.MaxUnavailable(static_cast<int>(scope.size()));
    // The scheduler's view, before anything is admitted. One that cannot be read is never "no
    // node is out": wait for it (saying so), then pause the run.
    auto state = ReadScheduler(drainer, scope, policy);
    if (!state) {
      for (const auto& n : todo) MarkNotStarted(n);
      continue;
    }
    // Out = what the scheduler shows out, plus our nodes admitted with a slot whose drain it
    // may not show yet. Recounted from a fresh read before every round of admissions: an admin
    // may drain a node, or a node we returned may fall out again, at any time.
    std::set<std::string> holding;   // ours, admitted with a slot, still running
    std::vector<std::string> out_names;
    auto count_out = [&] {
      std::set<std::string> out(holding.begin(), holding.end());
      for (const auto& n : scope) {
        auto it = state->find(n);
        if (it != state->end() && it->second.Unavailable()) out.insert(n);
      }
      out_names.assign(out.begin(), out.end());
      return static_cast<int>(out.size());
    };
    const int out_now = count_out();
    int avail = limit - out_now;
    Emit({.kind = RolloutEvent::Kind::kBatchStart, .batch = b.index,
          .batches = static_cast<int>(plan_.batches.size()), .canary = b.canary,
          .message = fmt::format("{} (max_unavailable {}, {} out now)", fmt::join(todo, " "),
                                 limit, out_now)});

    std::deque<std::string> queue(todo.begin(), todo.end());
    std::vector<std::thread> threads;
    std::vector<std::unique_ptr<NodeRun>> runs;
    int running = 0;
    int batch_failures = 0;
    std::chrono::milliseconds budget_waited{0};
    std::unique_lock lk(mu_);
    bool fresh_view = true;   // `state` was just read
    bool blind = false;       // the last read failed: admit nothing until one succeeds
    auto sched_since = d_.clock->Now();
    milliseconds sched_wait = opts_.timing.poll_initial;
    auto refresh = [&] {      // with lk held; released while the scheduler is read
      lk.unlock();
      auto fresh = drainer.Query(scope);
      lk.lock();
      if (!fresh) {
        // A view we cannot refresh is not a view we may admit on: nodes may have gone out.
        if (!blind) {
          sched_since = d_.clock->Now();
          sched_wait = opts_.timing.poll_initial;
          Emit({.kind = RolloutEvent::Kind::kWait, .batch = b.index, .status = "scheduler",
                .message = fmt::format("{} unavailable ({}); admitting nothing until it answers "
                                       "(up to {}s)", drainer.Name(), fresh.error().message,
                                       policy.scheduler_timeout_s)});
        }
        blind = true;
        if (d_.clock->Now() - sched_since >= std::chrono::seconds(policy.scheduler_timeout_s))
          SchedulerGaveUp(fmt::format("{} could not be read for {}s: {}", drainer.Name(),
                                      policy.scheduler_timeout_s, fresh.error().message));
        return;
      }
      blind = false;
      state = std::move(fresh);
      avail = limit - count_out();
    };
    while (!queue.empty() || running > 0) {
      if (!queue.empty() && !fresh_view && !dead() && !stopping()) refresh();
      fresh_view = false;
      while (!queue.empty() && !blind) {
        if (dead() || stopping() || scheduler_down()) break;
        if (failures_ > policy.max_failures) {
          halt_reason = fmt::format("{} node(s) failed, more than max_failures ({})", failures_,
                                    policy.max_failures);
          break;
        }
        if (b.canary && batch_failures > 0) {
          halt_reason = "the canary batch failed";
          break;
        }
        auto now = d_.clock->Now();
        if (!window->IsOpen(now)) {
          paused = true;
          if (auto nx = window->NextOpen(now)) next_window = Rfc3339(*nx);
          break;
        }
        const std::string node = queue.front();
        const NodePlan* np = plan_.FindNode(node);
        auto st = state->find(node);
        const bool already_out = st != state->end() && st->second.Unavailable();
        const bool needs_slot = np && np->NeedsDrain() && !already_out;
        if (needs_slot && avail <= 0) break;   // wait for a node to come back
        queue.pop_front();
        budget_waited = milliseconds(0);   // something moved: a later block waits afresh
        if (!np) {
          outcomes_[node] = {node, "failed", "plan", "not in the plan's nodes", false};
          ++failures_;
          continue;
        }
        if (needs_slot) {
          --avail;
          holding.insert(node);
        }
        std::vector<StepRecord> prior;
        if (auto it = prior_steps.find(node); it != prior_steps.end()) prior = it->second;
        std::optional<NodeRecord> pn;
        if (auto it = prior_nodes.find(node); it != prior_nodes.end()) pn = it->second;
        runs.push_back(std::make_unique<NodeRun>(*this, *np, b, policy, std::move(prior), pn,
                                                 adopt.count(node) > 0));
        NodeRun* run = runs.back().get();
        ++running;
        threads.emplace_back([this, run, &running, &holding, &batch_failures, &queue, node] {
          try {
            run->Run();
          } catch (const Dead&) {
          }
          std::lock_guard g(mu_);
          const NodeOutcome& o = run->outcome();
          if (!dead() && o.status == "deferred") {
            // It gave way to an older claim on the budget (another run, an admin): untouched
            // and back in service; it waits for a slot like any node not yet started.
            queue.push_back(node);
            Emit({.kind = RolloutEvent::Kind::kNote, .node = node, .message = o.error});
          } else if (!dead()) {
            outcomes_[o.node] = o;
            if (o.status == "failed") {
              ++failures_;
              ++batch_failures;
            }
            Emit({.kind = RolloutEvent::Kind::kNodeEnd, .node = o.node, .step = o.step,
                  .status = o.status, .message = o.error});
          }
          // Its slot is recounted from the scheduler's view at the next round: out there
          // (left drained, still down after a resume) it still counts.
          holding.erase(node);
          --running;
          cv_.notify_all();
        });
      }
      if (blind && !queue.empty() && !dead() && !stopping() && !scheduler_down()) {
        // Nothing is admitted while the scheduler cannot be read; look again after a backoff
        // (nodes of ours already running carry on, and wait for it themselves).
        lk.unlock();
        d_.clock->Sleep(sched_wait);
        sched_wait = std::min(sched_wait * 2, opts_.timing.scheduler_poll_max);
        lk.lock();
        continue;
      }
      bool blocked = !queue.empty() && running == 0;
      // Nodes another plumb run is working on come back when it is done with them: wait for
      // them (as long as a drain may take), not the short wait for nodes nobody works on.
      std::string other_run;
      for (const auto& n : scope) {
        auto it = state->find(n);
        if (it == state->end() || !it->second.drain) continue;
        auto pr = ParsePlumbReason(it->second.reason);
        if (pr && !pr->failed && pr->run != opts_.run_id) other_run = pr->run;
      }
      const auto wait_cap = other_run.empty()
                                ? opts_.timing.budget_wait
                                : std::chrono::duration_cast<milliseconds>(
                                      std::chrono::seconds(policy.drain_timeout_s));
      if (blocked && !other_run.empty() && budget_waited == milliseconds(0))
        Emit({.kind = RolloutEvent::Kind::kWait, .batch = b.index,
              .message = fmt::format("max_unavailable {} reached with nodes of plumb run {}: "
                                     "waiting for them to return", limit, other_run)});
      if (blocked && budget_waited < wait_cap && !dead() && !stopping() &&
          halt_reason.empty() && !paused && !scheduler_down()) {
        // Out of budget with nothing of ours running: nodes the scheduler shows out may be on
        // their way back (a moment of "not responding" after a resume). Look again a while.
        lk.unlock();
        d_.clock->Sleep(opts_.timing.poll_initial * 4);
        budget_waited += opts_.timing.poll_initial * 4;
        lk.lock();
        refresh();
        fresh_view = true;
        continue;
      }
      if (blocked || (!queue.empty() && (dead() || stopping() || !halt_reason.empty() || paused ||
                                         scheduler_down()))) {
        if (blocked && halt_reason.empty() && !paused && !dead() && !stopping() && !scheduler_down())
          halt_reason = fmt::format(
              "max_unavailable {} reached: {} node(s) out ({}); {} node(s) could not start",
              limit, limit - avail, fmt::join(out_names, " "), queue.size());
        if (running == 0) {
          if (!dead())
            for (const auto& n : queue) MarkNotStarted(n);
          queue.clear();
          break;
        }
      }
      if (running > 0) cv_.wait(lk);
    }
    lk.unlock();
    for (auto& t : threads) t.join();
    if (b.canary && batch_failures > 0 && halt_reason.empty())
      halt_reason = "the canary batch failed";
    Emit({.kind = RolloutEvent::Kind::kBatchEnd, .batch = b.index,
          .batches = static_cast<int>(plan_.batches.size()), .canary = b.canary});
    if (dead()) break;
  }

  if (dead()) {
    res.outcome = "crashed";
  } else {
    bool any_failed = false, any_incomplete = false;
    for (const auto& [n, o] : outcomes_) {
      any_failed |= o.status == "failed";
      any_incomplete |= o.status == "stale" || o.status == "busy";
    }
    // A journal that cannot be written stops the run as an error, not as a Ctrl-C.
    if (journal_broken_) res.outcome = "failed", res.journal_failed = true;
    else if (stopping()) res.outcome = "interrupted";
    else if (!halt_reason.empty()) res.outcome = "halted";
    else if (paused || scheduler_down()) res.outcome = "paused";
    else if (any_failed) res.outcome = "failed";
    else if (any_incomplete) res.outcome = "incomplete";
    else res.outcome = "done";
  }
  for (const auto& [n, o] : outcomes_) res.nodes.push_back(o);
  res.summary = Summary();
  res.halt_reason = halt_reason;
  if (paused) {
    res.halt_reason = "outside the maintenance window";
    res.next_window = next_window;
  } else if (scheduler_down() && res.halt_reason.empty()) {
    res.halt_reason = "the scheduler could not be read: " + scheduler_reason();
  }
  if (journal_broken_ && res.halt_reason.empty())
    res.halt_reason = "the journal could not be written; no new node was started";
  res.diags.Append(diags_);
  if (!dead()) {
    std::string line = res.summary;
    if (!res.halt_reason.empty()) line += "; " + res.outcome + ": " + res.halt_reason;
    // A full disk may free up: try for a while before giving up, so the run row does not stay
    // "running" (`plumb runs` shows a run whose owner is gone as such either way).
    Status s = d_.journal->EndRun(opts_.run_id, res.outcome, Now(), line);
    // (Not cut short by a Ctrl-C: the run's record is what --resume reads; a second one exits.)
    for (int i = 0; !s && journal_broken_ && i < 6; ++i) {
      Emit({.kind = RolloutEvent::Kind::kNote,
            .message = "the journal cannot be written (" + s.error().message +
                       "); retrying to record the run's end"});
      d_.clock->Sleep(milliseconds(5000));
      s = d_.journal->EndRun(opts_.run_id, res.outcome, Now(), line);
    }
    if (!s) res.diags.Add(s.error());
    Emit({.kind = RolloutEvent::Kind::kRunEnd, .status = res.outcome, .message = line});
  }
  return res;
}

}  // namespace

RolloutResult RunRollout(const Plan& plan, const RolloutOptions& opts, RolloutDeps& deps) {
  Engine e(plan, opts, deps);
  return e.Run();
}

std::string NewRunId(Clock::TimePoint now) {
  std::string t = Rfc3339(now);   // 2026-11-29T23:26:08.123Z
  std::random_device rd;
  return fmt::format("{}{}{}-{}{}{}-{:04x}", t.substr(0, 4), t.substr(5, 2), t.substr(8, 2),
                     t.substr(11, 2), t.substr(14, 2), t.substr(17, 2), rd() & 0xffff);
}

nlohmann::json DesiredFromActions(const NodePlan& node) {
  nlohmann::json d = nlohmann::json::object();
  for (const auto& pa : node.actions) {
    if (pa.action.pointer.empty()) continue;
    try {
      d[nlohmann::json::json_pointer(pa.action.pointer)] = pa.action.after;
    } catch (const nlohmann::json::exception&) {
      // A malformed pointer stands for nothing; verify then relies on the other actions.
    }
  }
  return d;
}

}  // namespace plumb::plans
