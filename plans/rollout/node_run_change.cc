// NodeRun: the change itself and what proves it: apply each action, reboot, verify, health
// gates, the marker, back to service.
#include "plans/rollout/rollout_internal.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "modules/marker/marker.h"
#include "modules/transport/cancel_signal.h"
#include "plans/plan/drain_reason.h"
#include "plans/rollout/health_run.h"

// Events are built with designated initializers naming only the fields that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace plumb::plans::rollout_detail {
namespace {

// Facts a module's Diff could not read (Module::DiffFacts): not "not known yet", which these
// re-checks answer by doing the step again, but a stop, as the exception it replaced was.
bool MalformedFacts(const Result<std::vector<modules::Action>>& left) {
  return !left.ok() && left.error().code == "facts.malformed";
}

}  // namespace

bool NodeRun::ApplyAction(const PlannedAction& pa) {
  const modules::Action& a = pa.action;
  const StepName step = StepName::Apply(a.id);
  const StepRecord* last = Last(step);
  if (last && Finished(last->outcome)) return true;
  const modules::Module* m = e_.deps().modules(a.module);
  if (!m) {
    Fail(step, fmt::format("no module '{}' in this plumb", a.module));
    return false;
  }
  // An intent with no outcome: the action may or may not have happened. Look before redoing.
  const bool recheck = adopted_ || (last && (last->outcome == StepState::kNone || last->outcome == StepState::kInterrupted));
  // An operation the BMC carries on with (a firmware update) was in flight when the run
  // stopped: Apply follows it (its task, else the inventory) instead of starting another.
  const StepName task_step = StepName::Task(a.id);
  const StepRecord* in_flight = Last(task_step);
  if (in_flight && Finished(in_flight->outcome)) in_flight = nullptr;
  if (recheck && !in_flight) {
    NodeFacts f = e_.deps().prober->Probe(np_.node);
    auto left = Remaining(f);
    if (MalformedFacts(left)) {   // "not known" would redo the action on facts that do not read
      Fail(step, left.error().message);
      return false;
    }
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
    modules::Action act = a;
    if (in_flight) act.params["in_flight"] = in_flight->detail;
    // What the BMC accepted goes to the journal before Apply waits on it ("task:<action id>",
    // closed below), so a resume finds it even after a kill; the wait's progress is the
    // node's heartbeat.
    std::optional<int64_t> task_id;
    nlohmann::json task_detail;
    ctx.in_flight = [&](const nlohmann::json& d) {
      StepRecord rec;
      rec.run = e_.opts().run_id;
      rec.node = np_.node;
      rec.step = task_step.Text();
      rec.detail = task_detail = d;
      rec.started_at = e_.Now();
      auto id = e_.deps().journal->StepIntent(rec);
      if (id) task_id = *id;
      else e_.JournalBroken(id.error());
    };
    const auto since = e_.deps().clock->Now();
    ctx.progress = [&](const transport::WaitProgress& p) { Heartbeat(step, since, p.Text(), "bmc"); };
    const modules::ApplyOutcome o = m->Apply(ctx, act);
    const bool cancelled = !o.ok() && o.error().code == transport::kCancelledCode;
    const std::optional<int64_t> open_task = task_id ? task_id : in_flight ? std::optional(in_flight->id) : std::nullopt;
    if (open_task) {
      const StepState st = cancelled ? StepState::kInterrupted : o.ok() ? StepState::kOk : StepState::kFailed;
      if (Status s = e_.deps().journal->StepOutcome(*open_task, st, o.ok() ? "" : o.error().message, e_.Now(),
                                                    MillisBetween(since, e_.deps().clock->Now()),
                                                    nlohmann::json::object());
          !s)
        e_.JournalBroken(s.error());
    }
    if (cancelled) {
      // Stopped waiting, not failed: the BMC carries on; --resume follows the task.
      StepResult r = StepResult::Interrupted();
      r.error = o.error().message;
      if (!task_detail.is_null()) r.detail["in_flight"] = task_detail;
      else if (in_flight) r.detail["in_flight"] = in_flight->detail;
      return r;
    }
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
  if (const StepRecord* wb = Last(StepKind::kWaitBoot); wb && wb->outcome == StepState::kOk) return true;
  const auto& t = e_.opts().timing;
  std::string old_id;
  bool issue = true;
  if (const StepRecord* rb = Last(StepKind::kReboot); rb && rb->outcome != StepState::kFailed) {
    // A reboot was journaled before the crash. Did it happen, or is it still on its way?
    old_id = rb->detail.value("boot_id", std::string());
    auto since = ParseRfc3339(rb->started_at).value_or(e_.deps().clock->Now());
    // No boot id from before (ssh was down, so it went through the BMC), and the BMC took the
    // power cycle: the boot id cannot tell whether it happened yet, and a second power cycle
    // of a node that is booting is worse than waiting. wait-boot takes any boot id.
    if (old_id.empty() && rb->outcome == StepState::kOk) issue = false;
    // Not known whether the call went out: if the node runs the planned changes, it rebooted.
    if (issue && old_id.empty() && ReadBootId()) {
      auto left = Remaining(e_.deps().prober->Probe(np_.node));
      if (MalformedFacts(left)) {   // never a second power cycle on facts that do not read
        Fail(StepKind::kReboot, left.error().message);
        return false;
      }
      if (left && left->empty()) return true;
    }
    if (issue) {
      // Down (rebooting) or back with a new id: it happened. The same id past the grace: it
      // never did, and is issued again below.
      const PollEnd end = Poll(
          *e_.deps().clock, since, t.reboot_grace, NodeBackoff(milliseconds(1000)),
          [&] {
            auto cur = ReadBootId();
            return !cur || (!old_id.empty() && *cur != old_id);
          },
          [&] { return Stopping(); }, [](auto) {});
      if (end == PollEnd::kStopped) {
        Interrupt(StepKind::kReboot);
        return false;
      }
      if (end == PollEnd::kReady) issue = false;
    }
  }
  if (issue && adopted_ && !Last(StepKind::kReboot)) {
    // No record of this node (a lost journal): if it already verifies, the reboot happened.
    auto left = Remaining(e_.deps().prober->Probe(np_.node));
    if (MalformedFacts(left)) {
      Fail(StepKind::kReboot, left.error().message);
      return false;
    }
    if (left && left->empty()) return true;
  }
  if (issue) {
    // The lease must outlast the reboot: nobody renews it while the node is down.
    if (lease_held_ && e_.deps().leases)
      (void)e_.deps().leases->Renew(np_.node, e_.Me(), t.reboot_timeout + e_.opts().timing.lease_ttl);
    auto id = ReadBootId();
    const bool bmc = np_.disruption >= Disruption::kFirmwareFlash || !id;
    if (id) old_id = *id;
    StepResult r = Step(StepKind::kReboot, {{"boot_id", old_id}, {"via", bmc ? "bmc" : "ssh"}}, [&] {
      if (bmc) {
        Status s = e_.deps().transport->PowerCycle(np_.node);
        // Ctrl-C while the BMC's power state was awaited: the reset went out; resume looks.
        if (!s && s.error().code == transport::kCancelledCode) return StepResult::Interrupted();
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
    if (!Check(StepKind::kReboot, r)) return false;
  }
  StepResult w = Step(StepKind::kWaitBoot, {{"old_boot_id", old_id}, {"timeout_s", t.reboot_timeout.count()}},
                      [&] {
    const auto start = e_.deps().clock->Now();
    std::string last = "boot id unchanged";
    std::string now_id;
    const PollEnd end = Poll(
        *e_.deps().clock, start, t.reboot_timeout, NodeBackoff(milliseconds(2000)),
        [&] {
          shell_.reset();
          auto cur = ReadBootId();
          if (cur && *cur != old_id && !cur->empty()) return now_id = *cur, true;
          if (!cur) last = "unreachable: " + cur.error().message;
          return false;
        },
        [&] { return StopWaiting(); }, [](auto) {});
    if (end == PollEnd::kReady)
      return StepResult::Ok({{"boot_id", now_id},
                             {"waited_ms", MillisBetween(start, e_.deps().clock->Now())}});
    if (end == PollEnd::kStopped) return StepResult::Interrupted();
    return StepResult::Failed(fmt::format("no new boot id after {}s ({})",
                                          t.reboot_timeout.count(), last));
  });
  return Check(StepKind::kWaitBoot, w);
}

bool NodeRun::Verify() {
  NodeFacts facts;
  StepResult r = Step(StepKind::kVerify, {}, [&] {
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
  if (r.outcome == StepState::kOk) {
    if (Status s = e_.deps().journal->SaveFacts(e_.opts().run_id, np_.node, "after",
                                                facts.facts_digest, facts.facts, e_.Now());
        !s)
      e_.JournalBroken(s.error());
  }
  return Check(StepKind::kVerify, r);
}

bool NodeRun::Health() {
  const auto timeout = std::chrono::seconds(policy_.health_timeout_s);
  // The health modules first: their checks name the test, the GPU and the value, which is what
  // the node's drain reason must say when it stays out.
  const nlohmann::json desired = Desired();
  // On-demand checks load every GPU for minutes: only on a node out of service (drained for
  // this change, or by an admin). A node that stays in service gets the cheap ones only.
  const bool out_of_service = np_.NeedsDrain() || admin_;
  std::vector<const modules::Module*> eligible, skipped;
  for (const modules::Module* m : PinnedHealthModules(desired, e_.deps().all_modules))
    (m->Info().on_demand && !out_of_service ? skipped : eligible).push_back(m);
  if (!eligible.empty()) {
    std::vector<std::string> names, not_run;
    for (const modules::Module* m : eligible) names.emplace_back(m->Name());
    for (const modules::Module* m : skipped) not_run.emplace_back(m->Name());
    nlohmann::json detail = {{"modules", names}};
    if (!not_run.empty()) detail["skipped_in_service"] = not_run;
    StepResult r = Step(StepName::Health("checks"), detail, [&] {
      auto sh = ShellNow();
      if (!sh) return StepResult::Failed("ssh: " + sh.error().message);
      NodeHealth h = RunNodeHealth(np_.node, **sh, desired, eligible, timeout);
      if (!h.reachable) shell_.reset();   // the connection is probably gone: a fresh one next
      if (h.Verdict() == modules::CheckStatus::kFail)
        return StepResult::Failed("health: " + fmt::format("{}", fmt::join(h.FailureLines(), "; ")));
      int warned = 0;
      for (const auto& c : h.checks) warned += c.status == modules::CheckStatus::kWarn;
      return StepResult::Ok({{"checks", h.checks.size()}, {"warnings", warned}, {"seconds", h.seconds}});
    });
    if (!Check(StepName::Health("checks"), r)) return false;
  }
  for (size_t i = 0; i < policy_.health.size(); ++i) {
    const std::string& cmd = policy_.health[i];
    const StepName step = StepName::Health(std::to_string(i + 1));
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
  if (!e_.plan().only_modules.empty()) {
    // The marker says the node is at the commit; a run of some modules does not make it so.
    StepResult r = Step(StepKind::kMarker, {}, [&] {
      return StepResult::Skipped(fmt::format("a run of {} only: the node's marker is left as it is",
                                             fmt::join(e_.plan().only_modules, ", ")));
    });
    return Check(StepKind::kMarker, r);
  }
  StepResult r = Step(StepKind::kMarker, {}, [&] {
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
  return Check(StepKind::kMarker, r);
}

bool NodeRun::ReturnToService() {
  auto& drainer = Sched();
  if (admin_) {
    StepResult r = Step(StepKind::kResume, {{"admin_reason", admin_reason_}}, [&] {
      return StepResult::Skipped("left drained: drained before plumb (" + admin_reason_ + ")");
    });
    out_.left_drained = true;
    const bool ok = Check(StepKind::kResume, r);
    if (ok) ReleaseLease();
    return ok;
  }
  StepResult r = Step(StepKind::kResume, {}, [&] {
    // After a reboot the scheduler may still see the node as down until its daemon registers
    // again; resuming before that would be undone or refused.
    const auto start = e_.deps().clock->Now();
    const auto limit = e_.opts().timing.resume_timeout;
    std::optional<StepResult> early;   // the step ends before any resume call
    PollEnd end = Poll(
        *e_.deps().clock, start, limit, NodeBackoff(milliseconds(2000)),
        [&] {
          modules::SchedulerNode n;
          SchedRead got = ReadNode(StepKind::kResume, &n);
          if (got == SchedRead::kGaveUp) return early = StepResult::Interrupted(), true;
          if (got != SchedRead::kOk) return false;
          if (!n.drain && !n.down) return early = StepResult::Skipped("already in service"), true;
          if (n.drain && RunOfReason(n.reason) != e_.opts().run_id) {
            drained_by_us_ = false;   // not ours to resume, nor to re-label
            admin_ = true;
            admin_reason_ = n.reason;
            early = StepResult::Skipped("left drained: drained by someone else meanwhile (" +
                                        n.reason + ")");
            return true;
          }
          if (!n.down) return true;
          Heartbeat(StepKind::kResume, start, fmt::format("waiting for {} to see the node up ({})",
                                                 drainer.Name(), n.state));
          return false;
        },
        [&] { return StopWaiting(); }, [](auto) {});
    if (early) return *early;
    if (end == PollEnd::kStopped) return StepResult::Interrupted();
    if (end == PollEnd::kTimedOut)
      return StepResult::Failed(fmt::format("{} still sees it down after {}s", drainer.Name(),
                                            limit.count()));
    Status s = SchedulerCall(StepKind::kResume, [&] { return drainer.Resume(np_.node); });
    if (!s && s.error().code == modules::kSchedulerUnavailable) return StepResult::Interrupted();
    if (!s) return StepResult::Failed(s.error().message);
    // Done only once the scheduler agrees: right after a resume Slurm shows the node as
    // not responding for a moment, and the next batch must not count it as out. Not cut short
    // by a Ctrl-C: the resume call went out, the node is back either way.
    end = Poll(
        *e_.deps().clock, start, limit, NodeBackoff(milliseconds(1000)),
        [&] {
          auto q = drainer.Query({np_.node});
          if (!q) return false;
          auto n = q->find(np_.node);
          return n == q->end() || !n->second.Unavailable();
        },
        [&] {
          if (e_.dead()) throw Dead{};
          return false;
        },
        [](auto) {});
    if (end == PollEnd::kReady) return StepResult::Ok();
    return StepResult::Ok({{"note", "resumed; the scheduler still shows it unavailable"}});
  });
  if (r.outcome == StepState::kOk || (r.outcome == StepState::kSkipped && !admin_)) returned_ = true;
  if (admin_) out_.left_drained = true;
  const bool ok = Check(StepKind::kResume, r);
  if (ok) ReleaseLease();
  return ok;
}

}  // namespace plumb::plans::rollout_detail
