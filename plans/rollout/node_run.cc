// NodeRun: the steps every node takes (journaling, lease, stale check, the walk of its steps),
// and the scheduler reads and writes that wait out an unreadable scheduler.
#include "plans/rollout/rollout_internal.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plans/plan/drain_reason.h"
#include "plans/plan/findings.h"
#include "plans/plan/waivers.h"

// Events are built with designated initializers naming only the fields that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace plumb::plans::rollout_detail {

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



// ---------------------------------------------------------------------------------------------
// NodeRun

bool NodeRun::Stopping() const { return e_.stopping(); }

const StepRecord* NodeRun::Last(const StepName& step) const {
  const std::string text = step.Text();
  for (auto it = prior_.rbegin(); it != prior_.rend(); ++it)
    if (it->step == text) return &*it;
  return nullptr;
}

void NodeRun::Put(NodeState status, const std::string& error) {
  if (e_.dead()) throw Dead{};
  NodeRecord r;
  r.note = status == NodeState::kRunning ? note_ : std::string();
  r.run = e_.opts().run_id;
  r.node = np_.node;
  r.status = status;
  r.last_step = out_.step;
  r.admin_drained = admin_;
  r.admin_reason = admin_reason_;
  r.error = error;
  r.started_at = started_at_;
  if (status != NodeState::kRunning) r.ended_at = e_.Now();
  if (Status s = e_.deps().journal->PutNode(r); !s) e_.JournalBroken(s.error());
}

StepResult NodeRun::Step(const StepName& step, nlohmann::json detail,
                         const std::function<StepResult()>& fn) {
  if (e_.dead()) throw Dead{};
  const std::string name = step.Text();
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
  // The crash hook names the kind ("apply.intent"), not the action.
  const std::string kind(Name(step.kind()));
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
    if (Status s = e_.deps().journal->StepOutcome(*id, r.outcome, r.error, Rfc3339(t1), ms,
                                                r.detail);
      !s)
    e_.JournalBroken(s.error());
  e_.Emit({.kind = RolloutEvent::Kind::kStep, .batch = batch_.index,
           .batches = static_cast<int>(e_.plan().batches.size()), .canary = batch_.canary,
           .node = np_.node, .step = name, .status = r.Word(), .message = r.error,
           .elapsed_ms = ms});
  return r;
}

bool NodeRun::Check(const StepName& step, const StepResult& r) {
  if (r.outcome == StepState::kFailed) {
    Fail(step, r.error);
    return false;
  }
  if (r.outcome == StepState::kInterrupted) {
    Interrupt(step);
    return false;
  }
  return true;
}

void NodeRun::Fail(const StepName& step, const std::string& error) {
  out_.status = NodeState::kFailed;
  out_.step = step.Text();
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
    const std::string reason = FailureReason(e_.opts().run_id, step.Text(), error);
    Status s = SchedulerCall(step, [&] { return sched.Drain(np_.node, reason); });
    (void)s;   // the journal has the failure either way
    out_.left_drained = true;
  } else if (admin_) {
    out_.left_drained = true;   // as the admin left it, reason untouched
  }
  Put(NodeState::kFailed, error);
  ReleaseLease();
}

void NodeRun::Interrupt(const StepName& step) {
  out_.status = NodeState::kInterrupted;
  out_.step = step.Text();
  out_.left_drained = drained_by_us_ || admin_;
  Put(NodeState::kInterrupted);
}

bool NodeRun::ContinueTo(const StepName& next) {
  if (e_.dead()) throw Dead{};
  if (auto to = e_.LeaseLostTo(np_.node)) {
    // Our lease expired (a long outage) and another run took the node: it is theirs now. It
    // may still carry our drain: say so, so someone returns it (--resume of this run does).
    lease_held_ = false;
    out_.step = next.Text();
    out_.left_drained = drained_by_us_;
    Busy("lost its lease to run " + *to + " before " + next.Text() + "; left to that run" +
         (drained_by_us_ ? " (still drained by this run: plumb apply --resume " +
                               e_.opts().run_id + " returns it once that run is done)"
                         : ""));
    return false;
  }
  if (!Stopping()) return true;
  Interrupt(next);
  return false;
}

plans::Backoff NodeRun::SchedulerBackoff() const {
  return {e_.opts().timing.poll_initial, e_.opts().timing.scheduler_poll_max};
}

plans::Backoff NodeRun::NodeBackoff(milliseconds cap) const {
  return {e_.opts().timing.poll_initial, std::min(cap, e_.opts().timing.poll_max)};
}

bool NodeRun::StopWaiting() const {
  if (e_.dead()) throw Dead{};
  return Stopping();
}

modules::Drainer& NodeRun::Sched() { return e_.DrainerFor(np_.rollout); }

void NodeRun::Heartbeat(const StepName& step, Clock::TimePoint since, const std::string& what,
                        const std::string& status) {
  const auto now = e_.deps().clock->Now();
  if (last_heartbeat_ && now - *last_heartbeat_ < e_.opts().timing.heartbeat) return;
  last_heartbeat_ = now;
  note_ = what;
  e_.Emit({.kind = RolloutEvent::Kind::kWait, .batch = batch_.index, .node = np_.node,
           .step = step.Text(), .status = status, .message = what,
           .elapsed_ms = MillisBetween(since, now)});
  Put(NodeState::kRunning);   // `plumb runs RUN` shows what it waits for
}

NodeRun::SchedRead NodeRun::ReadNode(const StepName& step, modules::SchedulerNode* out) {
  auto& sched = Sched();
  const auto start = e_.deps().clock->Now();
  SchedRead got = SchedRead::kGaveUp;
  std::string why;
  const PollEnd end = Poll(
      *e_.deps().clock, start, std::chrono::seconds(policy_.scheduler_timeout_s),
      SchedulerBackoff(),
      [&] {
        auto q = sched.Query({np_.node});
        if (!q) {
          why = q.error().message;
          return false;
        }
        auto it = q->find(np_.node);
        if (it == q->end()) {
          got = SchedRead::kUnknownNode;
        } else {
          *out = it->second;
          got = SchedRead::kOk;
        }
        return true;
      },
      [&] { return StopWaiting(); },
      [&](auto) {
        Heartbeat(step, start,
                  fmt::format("{} unavailable ({}); waiting up to {}s, nothing new starts "
                              "meanwhile", sched.Name(), why, policy_.scheduler_timeout_s),
                  "scheduler");
      });
  if (end == PollEnd::kTimedOut)
    e_.SchedulerGaveUp(fmt::format("{} could not be read for {}s: {}", sched.Name(),
                                   policy_.scheduler_timeout_s, why));
  return end == PollEnd::kReady ? got : SchedRead::kGaveUp;
}

Status NodeRun::SchedulerCall(const StepName& step, const std::function<Status()>& call) {
  const auto start = e_.deps().clock->Now();
  Status s = OkStatus();
  const PollEnd end = Poll(
      *e_.deps().clock, start, std::chrono::seconds(policy_.scheduler_timeout_s),
      SchedulerBackoff(),
      [&] {
        s = call();
        return s || s.error().code != modules::kSchedulerUnavailable;
      },
      [&] { return StopWaiting(); },
      [&](auto) {
        Heartbeat(step, start, fmt::format("{}; retrying", s.error().message), "scheduler");
      });
  if (end == PollEnd::kTimedOut)
    e_.SchedulerGaveUp(fmt::format("{} stayed unavailable for {}s: {}", Sched().Name(),
                                   policy_.scheduler_timeout_s, s.error().message));
  return s;
}

void NodeRun::Busy(const std::string& why) {
  out_.status = NodeState::kBusy;
  out_.error = why;
  Put(NodeState::kBusy, why);
  ReleaseLease();
}

bool NodeRun::Lease() {
  NodeLeases* leases = e_.deps().leases;
  if (!leases) return true;
  LeaseReply reply;
  LeaseHolder other;
  StepResult r = Step(StepKind::kLease, {{"ttl_s", e_.opts().timing.lease_ttl.count()}}, [&] {
    auto got = leases->Acquire(np_.node, e_.Me(), e_.opts().timing.lease_ttl);
    if (!got) {
      // A node plumb is already working on (resume) may be down mid-reboot: the lease it
      // holds from before is still there; the renewer keeps it and later steps re-check.
      if (touched_) return StepResult::Skipped("node unreachable: " + got.error().message);
      // Untouched by this run and unreachable now (another run may be rebooting it): nothing
      // is known against the node, so it is left alone, not failed (and never drained).
      return StepResult::SkippedWith({{"unreachable", got.error().message}});
    }
    reply = *got;
    other = got->other;
    nlohmann::json held = {{"run", other.run}, {"host", other.host}, {"pid", other.pid},
                           {"user", other.user}, {"expires", other.expires}};
    if (reply.kind == LeaseReply::Kind::kHeld) {
      return StepResult::SkippedWith({{"held_by", held}});
    }
    if (reply.kind == LeaseReply::Kind::kTookOver) return StepResult::Ok({{"took_over_from", held}});
    return StepResult::Ok();
  });
  if (r.outcome == StepState::kOk) {
    lease_held_ = true;
    e_.HoldLease(np_.node);
    if (reply.kind == LeaseReply::Kind::kTookOver)
      e_.Emit({.kind = RolloutEvent::Kind::kNote, .node = np_.node,
               .message = fmt::format("took over the lease run {} (host {}, pid {}) let expire",
                                      other.run, other.host, other.pid)});
    return true;
  }
  if (r.outcome == StepState::kSkipped && r.detail.contains("unreachable")) {
    Busy("unreachable when its lease was to be taken (" + r.detail["unreachable"].get<std::string>() +
         "): left alone; --resume retries it");
    return false;
  }
  if (r.outcome == StepState::kSkipped && r.detail.contains("held_by")) {
    Busy(fmt::format("leased by run {} (host {}, pid {}, user {}): another plumb run is working "
                     "on it; left alone", other.run, other.host, other.pid, other.user));
    return false;
  }
  if (r.outcome == StepState::kSkipped) return true;   // resume, node unreachable: later steps decide
  return Check(StepKind::kLease, r);
}

void NodeRun::ReleaseLease() {
  if (!lease_held_ || !e_.deps().leases || e_.dead()) return;
  lease_held_ = false;
  e_.DropLease(np_.node);
  if (Status s = e_.deps().leases->Release(np_.node, e_.Me()); !s)
    e_.Emit({.kind = RolloutEvent::Kind::kNote, .node = np_.node,
             .message = "could not release its lease (it expires by itself): " + s.error().message});
}

bool NodeRun::CheckActionsFollow(const NodeFacts& facts) {
  // The digest proves the plan file was not changed in transit, not that its actions are
  // what the commit asks: a re-sealed plan could carry other versions or parameters. With the
  // node's facts equal to the plan's, its modules must derive every planned action again.
  // Out-of-band modules (BMC) are checked when the prober read the BMC (the real one does, for
  // the modules the node pins); cmd/ also checks their desired values against the commit. An
  // in-band module whose facts cannot be used stops the node: unchecked, it would be changed
  // on the plan's word alone.
  const nlohmann::json desired = Desired();
  // A health module's actions (failed checks) change nothing and Apply refuses them, so there
  // is nothing a re-sealed plan could smuggle through them; their facts also move under load
  // (the digest leaves them out), so a check that passes now is no sign of an edited plan.
  std::set<std::string> mods;
  for (const PlannedAction& pa : np_.actions) mods.insert(pa.action.module);
  std::vector<modules::Action> derived;
  for (const std::string& name : mods) {
    const modules::Module* m = e_.deps().modules(name);
    if (!m) continue;   // ApplyAction says "no module" for it
    if (m->Info().IsHealth()) continue;
    auto fit = facts.facts.find(name);
    if (m->HasBmcProbe() && fit == facts.facts.end()) continue;
    std::string why;
    if (auto err = facts.module_errors.find(name); err != facts.module_errors.end()) why = err->second;
    else if (fit == facts.facts.end()) why = "no facts from it";
    if (!why.empty()) {
      Fail(StepKind::kProbe, fmt::format("cannot check the plan's {} actions against commit {}: {}", name,
                                e_.Commit().substr(0, 12), why));
      return false;
    }
    auto diff = m->DiffFacts(desired, *fit);
    if (!diff.ok()) {
      Fail(StepKind::kProbe, fmt::format("cannot check the plan's {} actions: {}", name, diff.error().message));
      return false;
    }
    for (auto& a : *diff) derived.push_back(std::move(a));
  }
  derived = WithoutWaived(std::move(derived));
  for (const PlannedAction& pa : np_.actions) {
    const modules::Module* m = e_.deps().modules(pa.action.module);
    if (!m || m->Info().IsHealth() || (m->HasBmcProbe() && !facts.facts.contains(pa.action.module))) continue;
    auto same = std::find_if(derived.begin(), derived.end(), [&](const modules::Action& d) {
      return d.id == pa.action.id && d.after == pa.action.after && d.params == pa.action.params &&
             d.disruption == pa.action.disruption;
    });
    if (same == derived.end()) {
      Fail(StepKind::kProbe, fmt::format("the plan's action {} ({}) does not follow from commit {} and "
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
  nlohmann::json d = it != e_.opts().desired.end() ? it->second : DesiredFromActions(np_);
  if (e_.plan().only_modules.empty() || !d.is_object()) return d;
  // A plan of some modules only (plumb bmc apply): the keys the others own are not this run's
  // to verify (they may well differ still).
  nlohmann::json part = nlohmann::json::object();
  for (const std::string& name : e_.plan().only_modules) {
    const modules::Module* m = e_.deps().modules(name);
    if (!m) continue;
    for (std::string_view owned : m->Info().owns) {
      const std::string key(owned.substr(1, owned.find('/', 1) - 1));   // "/firmware" -> firmware
      if (d.contains(key)) part[key] = d[key];
    }
  }
  return part;
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
    // Verify is about state; the health step judges the checks (with their own timeouts).
    if (!m || !m->Wants(desired) || m->Info().IsHealth()) continue;
    if (auto err = f.module_errors.find(name); err != f.module_errors.end())
      return Diagnostic::Error("apply.probe", fmt::format("{} probe failed: {}", name, err->second));
    auto fit = f.facts.find(name);
    if (fit == f.facts.end() && m->HasBmcProbe())
      return Diagnostic::Error("apply.probe",
                               fmt::format("{} cannot be verified: the node's BMC was not read "
                                           "(no bmc: URL, or no defaults.bmc.credentials)", name));
    if (fit == f.facts.end())
      return Diagnostic::Error("apply.probe", fmt::format("no facts from module {}", name));
    auto diff = m->DiffFacts(desired, *fit);
    if (!diff.ok()) return diff.error();
    for (auto& a : *diff) left.push_back(std::move(a));
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
    const auto step = StepName::Parse(s.step);
    if (!step) continue;   // no step plumb writes (a journal from a newer plumb): not ours to judge
    switch (step->kind()) {
      case StepKind::kDrain:
        if (s.outcome != StepState::kFailed && s.outcome != StepState::kSkipped) touched_ = true;
        break;
      case StepKind::kUndrain:
        if (s.outcome == StepState::kOk) touched_ = false;
        break;
      case StepKind::kApply:
      case StepKind::kReboot:
      case StepKind::kWaitBoot:
      case StepKind::kVerify:
      case StepKind::kHealth:
      case StepKind::kMarker:
      case StepKind::kResume:
        changed_ = touched_ = true;
        break;
      case StepKind::kProbe:
      case StepKind::kLease:
      case StepKind::kClaim:
      case StepKind::kWaitDrained:
      case StepKind::kTask:   // journaled inside its apply step, which counts
      case StepKind::kStack:  // the scheduler's tags, not the node
        break;
    }
  }
  touched_ = touched_ || adopted_;
  Put(NodeState::kRunning);
  e_.Emit({.kind = RolloutEvent::Kind::kNote, .batch = batch_.index, .node = np_.node,
           .message = touched_ ? "continuing" : "starting"});
  if (Steps()) {
    out_.status = NodeState::kDone;
    Put(NodeState::kDone);
    ReleaseLease();
  }
}

bool NodeRun::Steps() {
  // 0. One writer per node: its lease, and no other plumb run's drain in progress on it.
  if (!Lease()) return false;
  if (!touched_) {
    modules::SchedulerNode sn;
    SchedRead got = ReadNode(StepKind::kLease, &sn);
    if (got == SchedRead::kGaveUp) {
      Interrupt(StepKind::kLease);
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
    StepResult r = Step(StepKind::kProbe, {{"plan_digest", np_.facts_digest}}, [&] {
      facts = e_.deps().prober->Probe(np_.node);
      if (!facts.readable) return StepResult::Failed("unreachable: " + facts.unreadable_reason);
      if (facts.facts_digest != np_.facts_digest) {
        // Changed since the plan. Already where the commit wants it (another run, or a hand,
        // converged it meanwhile): nothing is left to do, so it is done, untouched, not stale
        // (a stale node makes every --resume exit 3 and never ends).
        // (A node the plan returns to service still goes on to its return.)
        if (auto left = Remaining(facts); left && left->empty() && !np_.return_to_service)
          return StepResult::SkippedWith({{"digest", facts.facts_digest},
                                          {"converged_elsewhere", true}});
        return StepResult::Stale({{"digest", facts.facts_digest}});
      }
      // Its rollout leaves unhealthy nodes as they are, and it fails a health check now (it
      // did not when planned, or the plan would have skipped it): not the node the plan saw.
      if (policy_.unhealthy == inventory::RolloutPolicy::Unhealthy::kSkip)
        if (auto failed = FailedChecks(Desired(), facts.facts, e_.deps().all_modules); !failed.empty())
          return StepResult::Stale({{"digest", facts.facts_digest}, {"unhealthy", failed}});
      return StepResult::Ok({{"digest", facts.facts_digest}});
    });
    if (r.outcome == StepState::kSkipped && r.detail.value("converged_elsewhere", false)) {
      e_.Emit({.kind = RolloutEvent::Kind::kNote, .batch = batch_.index, .node = np_.node,
               .message = "already at the desired state (converged since the plan, by another "
                          "run or by hand): done, untouched"});
      return true;
    }
    if (r.stale) {
      out_.status = NodeState::kStale;
      out_.error = fmt::format("facts changed since the plan (plan {}, now {})",
                               np_.facts_digest.substr(0, 19),
                               r.detail.value("digest", std::string()).substr(0, 19));
      if (auto u = r.detail.find("unhealthy"); u != r.detail.end() && u->is_array())
        out_.error = fmt::format("unhealthy since the plan, left as it is (rollout '{}': unhealthy: "
                                 "skip): {}", np_.rollout,
                                 fmt::join(u->get<std::vector<std::string>>(), "; "));
      Put(NodeState::kStale, out_.error);
      ReleaseLease();
      return false;
    }
    if (!Check(StepKind::kProbe, r)) return false;
    if (!CheckActionsFollow(facts)) return false;
    if (Status s = e_.deps().journal->SaveFacts(e_.opts().run_id, np_.node, "before",
                                                facts.facts_digest, facts.facts, e_.Now());
        !s)
      e_.JournalBroken(s.error());
  }
  // A node that got as far as its marker is changed and verified: only its return is left.
  if (const StepRecord* m = Last(StepKind::kMarker); m && m->outcome == StepState::kOk) {
    if (!ShowStack()) return false;
    if (np_.NeedsDrain() || admin_) return ContinueTo(StepKind::kResume) && ReturnToService();
    return true;
  }
  // 2. Out of service, and showing no stack while it changes.
  if (np_.NeedsDrain()) {
    if (!ContinueTo(StepKind::kDrain) || !Drain()) return false;
  }
  if (!np_.actions.empty() && !HideStack()) return false;
  // 3. The changes, in the plan's order, each on a node still out of service.
  for (const auto& pa : np_.actions) {
    const StepName step = StepName::Apply(pa.action.id);
    if (!ContinueTo(step)) return false;
    if ((np_.NeedsDrain() || admin_) && !StillOut(step)) return false;
    if (!ApplyAction(pa)) return false;
  }
  // 4. Reboot when any action needs one.
  if (np_.disruption >= Disruption::kReboot) {
    if (!ContinueTo(StepKind::kReboot) || !StillOut(StepKind::kReboot) || !Reboot()) return false;
  }
  // 5-8. Verify, gate, mark, show the stack, return.
  if (!ContinueTo(StepKind::kVerify) || !Verify()) return false;
  if (!ContinueTo(StepKind::kHealth) || !Health()) return false;
  if (!ContinueTo(StepKind::kMarker) || !Marker()) return false;
  if (!ShowStack()) return false;
  if (np_.NeedsDrain() || admin_) {
    if (!ContinueTo(StepKind::kResume) || !ReturnToService()) return false;
  }
  return true;
}

}  // namespace plumb::plans::rollout_detail
