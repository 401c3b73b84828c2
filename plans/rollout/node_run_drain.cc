// NodeRun: out of service and back within the budget: drain, claims, the budget re-check,
// giving way, waiting for jobs.
#include "plans/rollout/rollout_internal.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "plans/core/duration_text.h"
#include "plans/plan/drain_reason.h"

// Events are built with designated initializers naming only the fields that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace plumb::plans::rollout_detail {

bool NodeRun::Drain() {
  auto& drainer = Sched();
  modules::SchedulerNode sn;
  switch (ReadNode(StepKind::kDrain, &sn)) {
    case SchedRead::kGaveUp: Interrupt(StepKind::kDrain); return false;
    case SchedRead::kUnknownNode:
      Fail(StepKind::kDrain, fmt::format("{} does not know node {}", drainer.Name(), np_.node));
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
    Put(NodeState::kRunning);
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
    StepResult r = Step(StepKind::kDrain, detail, [&] {
      Status s = SchedulerCall(StepKind::kDrain, [&] { return drainer.Drain(np_.node, reason); });
      if (!s && s.error().code == modules::kSchedulerUnavailable) return StepResult::Interrupted();
      return s ? StepResult::Ok() : StepResult::Failed(s.error().message);
    });
    // Even a failed drain call may have taken effect: resume it on failure only if it did.
    if (r.outcome == StepState::kOk) drained_by_us_ = true;
    DropClaim(sn);   // the drain counts from here on (or there is no drain to count)
    if (!Check(StepKind::kDrain, r)) return false;
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
  Status s = SchedulerCall(StepKind::kDrain, [&] { return Sched().Drain(np_.node, reason); });
  return s.ok();
}

std::optional<std::map<std::string, modules::SchedulerNode>> NodeRun::ReadScope(
    const StepName& step, Clock::TimePoint start) {
  const std::vector<std::string> scope = e_.ScopeOf(np_.rollout);
  std::optional<std::map<std::string, modules::SchedulerNode>> view;
  std::string why;
  const PollEnd end = Poll(
      *e_.deps().clock, start, std::chrono::seconds(policy_.scheduler_timeout_s),
      SchedulerBackoff(),
      [&] {
        auto q = Sched().Query(scope);
        if (!q) {
          why = q.error().message;
          return false;
        }
        view = std::move(*q);
        return true;
      },
      [&] { return StopWaiting(); },
      [&](auto) {
        Heartbeat(step, start, fmt::format("{} unavailable ({}): cannot count who is out",
                                           Sched().Name(), why), "scheduler");
      });
  if (end == PollEnd::kReady) return view;
  if (end == PollEnd::kTimedOut)
    e_.SchedulerGaveUp(fmt::format("{} could not be read for {}s: {}", Sched().Name(),
                                   policy_.scheduler_timeout_s, why));
  Interrupt(step);
  return std::nullopt;
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
  StepResult r = Step(StepKind::kClaim, {{"scheduler", std::string(sched.Name())}}, [&] {
    Status s = SchedulerCall(StepKind::kClaim, [&] { return sched.SetClaim(sn, mine); });
    if (!s && s.error().code == modules::kSchedulerUnavailable) return StepResult::Interrupted();
    return s ? StepResult::Ok() : StepResult::Failed(s.error().message);
  });
  claimed_ = r.outcome == StepState::kOk;
  if (!claimed_) e_.SetClaimedNow(np_.node, false);
  if (!Check(StepKind::kClaim, r)) return false;
  plans::Backoff backoff = SchedulerBackoff();
  const auto patience = std::chrono::seconds(policy_.scheduler_timeout_s);
  for (;;) {
    auto q = ReadScope(StepKind::kClaim, start);
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
      Heartbeat(StepKind::kClaim, start,
                fmt::format("{} has not heard from {} (not responding): cannot count them yet; "
                            "waiting up to {}s", sched.Name(), fmt::join(unsettled, ", "),
                            policy_.scheduler_timeout_s),
                "scheduler");
      e_.deps().clock->Sleep(backoff.Next());
      continue;
    }
    DropClaim(sn);
    if (Stopping()) {
      Interrupt(StepKind::kClaim);
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
  out_.status = NodeState::kDeferred;
  out_.error = why;
  Put(NodeState::kRunning);
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
  plans::Backoff backoff = SchedulerBackoff();
  std::optional<std::map<std::string, modules::SchedulerNode>> q;
  int out = 0, older = 0;
  std::vector<std::string> who;
  for (;;) {
    q = ReadScope(StepKind::kDrain, start);   // drained, nothing changed: --resume checks again
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
      Interrupt(StepKind::kDrain);
      return false;
    }
    Heartbeat(StepKind::kDrain, start,
              fmt::format("{} has not heard from {} (not responding): cannot count them yet; "
                          "waiting up to {}s", Sched().Name(), fmt::join(unsettled, ", "),
                          policy_.scheduler_timeout_s),
              "scheduler");
    e_.deps().clock->Sleep(backoff.Next());
  }
  const std::string why = fmt::format(
      "{} node(s) out in its scope, max_unavailable {}: {} took nodes out meanwhile; returned to "
      "service untouched, to be admitted later", out, limit, fmt::join(who, ", "));
  // Give the drain back, but only the drain that is still ours.
  auto me = q->find(np_.node);
  const bool still_ours = me != q->end() && me->second.drain &&
                          RunOfReason(me->second.reason) == e_.opts().run_id;
  StepResult r = Step(StepKind::kUndrain, {{"why", why}}, [&] {
    if (!still_ours) return StepResult::Skipped("not drained by this run any more");
    Status s = SchedulerCall(StepKind::kUndrain, [&] { return Sched().Resume(np_.node); });
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
  if (!Check(StepKind::kUndrain, r)) return false;
  drained_by_us_ = false;
  Defer(why);
  return false;
}

bool NodeRun::StillOut(const StepName& next) {
  // Right before a step that changes the node (an action, a reboot, a power cycle): the
  // scheduler's word now, whoever drained it. Between two steps an admin may have returned the
  // node to service and a job may have started there; a slurmctld restart may have lost the
  // drain. A node that is not out with no job is never touched.
  modules::SchedulerNode n;
  switch (ReadNode(next, &n)) {
    case SchedRead::kGaveUp: Interrupt(next); return false;   // unreadable: nothing starts
    case SchedRead::kUnknownNode:
      StoppedBeforeStep(next, fmt::format("{} no longer knows node {}", Sched().Name(), np_.node));
      return false;
    case SchedRead::kOk: break;
  }
  const bool out = n.drain || n.down;
  if (out && n.running_jobs == 0) return true;
  const std::string now = n.jobs.empty()
                              ? fmt::format("state {}", n.state)
                              : fmt::format("state {}, running {}", n.state, fmt::join(n.jobs, ", "));
  const bool ours_now = n.drain && RunOfReason(n.reason) == e_.opts().run_id;
  if (admin_ || (!drained_by_us_ && !ours_now)) {
    // Not plumb's to take out again: whoever returned it decides. It stops here, as it is.
    StoppedBeforeStep(next, fmt::format(
        "back in service before {} ({}): drained by someone else ({}), who returned it; plumb "
        "does not take it out again; stopped here, the steps before are done: plumb apply "
        "--retry-failed {} drains it and finishes once it may", next.Text(), now,
        admin_reason_.empty() ? n.reason : admin_reason_, e_.opts().run_id));
    return false;
  }
  // Our drain: lost (a scheduler restart) or lifted by someone. Take it out again and wait
  // for whatever started there, as for the first drain.
  if (!n.drain && !n.down && !Redrain(n)) {
    Interrupt(next);   // the scheduler went away again: the node stays as it is, resumable
    return false;
  }
  return WaitDrained();
}

void NodeRun::StoppedBeforeStep(const StepName& step, const std::string& why) {
  e_.Emit({.kind = RolloutEvent::Kind::kNote, .node = np_.node, .message = why});
  out_.status = NodeState::kFailed;
  out_.step = step.Text();
  out_.error = why;
  out_.left_drained = false;
  Put(NodeState::kFailed, why);
  ReleaseLease();
}

bool NodeRun::WaitDrained() {
  // Wait until no job runs there. "drained" alone is not enough: a node whose job is still
  // PENDING shows drained at once (testbed gotcha 9), so the running-job count must be zero.
  const auto timeout = std::chrono::seconds(policy_.drain_timeout_s);
  StepResult w = Step(StepKind::kWaitDrained, {{"timeout_s", policy_.drain_timeout_s}}, [&] {
    const auto start = e_.deps().clock->Now();
    std::string last;
    StepResult result;
    const PollEnd end = Poll(
        *e_.deps().clock, start, timeout, NodeBackoff(),
        [&] {
          // ReadNode waits out an unreadable scheduler (and pauses the run past its timeout):
          // jobs the scheduler cannot show are not jobs that ended.
          modules::SchedulerNode n;
          SchedRead got = ReadNode(StepKind::kWaitDrained, &n);
          if (got == SchedRead::kGaveUp) return result = StepResult::Interrupted(), true;
          if (got != SchedRead::kOk) return false;
          // Drained, or set down on purpose by an admin (no drain flag, and no job can run).
          if ((n.drained || n.DownOnPurpose()) && n.running_jobs == 0) {
            result = StepResult::Ok({{"waited_ms", MillisBetween(start, e_.deps().clock->Now())}});
            return true;
          }
          if (!n.drain && !n.DownOnPurpose() && drained_by_us_ && !admin_ && !Redrain(n))
            return result = StepResult::Interrupted(), true;   // the scheduler went away again
          // Our drain, work still there: push it off (Kubernetes evicts again; a refusal by a
          // disruption budget is retried at the next poll). An admin's drain is theirs to empty.
          if (n.drain && drained_by_us_ && !admin_ && n.running_jobs > 0)
            (void)Sched().Evict(np_.node);
          last = n.jobs.empty() ? n.state : fmt::format("{}", fmt::join(n.jobs, ", "));
          Heartbeat(StepKind::kWaitDrained, start, WaitingFor(n, start));
          return false;
        },
        [&] { return StopWaiting(); }, [](auto) {});
    if (end == PollEnd::kReady) return result;
    if (end == PollEnd::kStopped) return StepResult::Interrupted();
    return StepResult::Failed(fmt::format("drain timeout after {}s, still running: {}",
                                          policy_.drain_timeout_s, last));
  });
  note_.clear();
  return Check(StepKind::kWaitDrained, w);
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
                           : FormatDuration(static_cast<int>(j.end_unix - now_unix)) + " left";
    jobs.push_back(fmt::format("{} ({}: {}, {})", j.id, j.user, j.name, left));
  }
  if (jobs.empty())
    for (const std::string& j : n.jobs) jobs.push_back(j);
  const int elapsed = static_cast<int>(MillisBetween(since, now) / 1000);
  std::string what = jobs.empty() ? fmt::format("waiting for the node to drain ({})", n.state)
                                   : fmt::format("waiting for {} job(s): {}", jobs.size(),
                                                 fmt::join(jobs, ", "));
  return fmt::format("{}; {} of {}", what, FormatDuration(elapsed),
                     FormatDuration(policy_.drain_timeout_s));
}

}  // namespace plumb::plans::rollout_detail
