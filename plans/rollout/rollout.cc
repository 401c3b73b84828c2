// The apply state machine's main thread: batches, admission (plans/rollout/admission.h), the lease
// renewer, the run's end. NodeRun (plans/node_run*.cc) carries each node.
#include "plans/rollout/rollout_internal.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "plans/plan/drain_reason.h"

// Events are built with designated initializers naming only the fields that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace plumb::plans {
namespace rollout_detail {

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
  o.status = NodeState::kNotStarted;
  outcomes_[node] = o;
  if (dead()) return;
  // A journal that could not be written (a store that does not answer, a full disk) is not
  // asked again for each node: the node is left without a row, which --resume and `plumb
  // runs` read as not started. (Each write would fail again, a store's after waiting.)
  if (!journal_broken_) {
    NodeRecord r;
    r.run = opts_.run_id;
    r.node = node;
    r.status = NodeState::kNotStarted;
    if (Status s = d_.journal->PutNode(r); !s) JournalBroken(s.error());
  }
  Emit({.kind = RolloutEvent::Kind::kNodeEnd, .node = node,
        .status = std::string(Name(NodeState::kNotStarted))});
}

Result<std::map<std::string, modules::SchedulerNode>> Engine::ReadScheduler(
    modules::Drainer& drainer, const std::vector<std::string>& scope,
    const inventory::RolloutPolicy& policy) {
  const auto start = d_.clock->Now();
  std::optional<Clock::TimePoint> said;
  Result<std::map<std::string, modules::SchedulerNode>> q =
      Diagnostic::Error(std::string(modules::kSchedulerUnavailable), "not read yet");
  const PollEnd end = Poll(
      *d_.clock, start, std::chrono::seconds(policy.scheduler_timeout_s),
      {opts_.timing.poll_initial, opts_.timing.scheduler_poll_max},
      [&] {
        q = drainer.Query(scope);
        return q.ok();
      },
      [&] { return dead() || stopping(); },
      [&](Clock::TimePoint::duration elapsed) {
        const auto now = d_.clock->Now();
        if (said && now - *said < opts_.timing.heartbeat) return;
        said = now;
        Emit({.kind = RolloutEvent::Kind::kWait, .status = "scheduler",
              .message = fmt::format("{} unavailable ({}); admitting nothing, waiting up to {}s",
                                     drainer.Name(), q.error().message, policy.scheduler_timeout_s),
              .elapsed_ms = std::chrono::duration_cast<milliseconds>(elapsed).count()});
      });
  if (end == PollEnd::kTimedOut)
    SchedulerGaveUp(fmt::format("{} could not be read for {}s: {}", drainer.Name(),
                                policy.scheduler_timeout_s, q.error().message));
  return q;
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
    if (d_.lock_expiring && d_.lock_expiring()) {
      // The cluster lock is lost, cannot be renewed, or is about to run out: another runner
      // may take this run over, and the nodes must not stay this process's. Their leases
      // lapse by themselves; the nodes stop before their next step.
      std::vector<std::string> held;
      {
        std::lock_guard lock(lease_mu_);
        held.assign(leases_held_.begin(), leases_held_.end());
      }
      if (!held.empty())
        Emit({.kind = RolloutEvent::Kind::kNote,
              .message = fmt::format("the cluster lock is not held: the leases of {} are no longer "
                                     "renewed (they lapse within {}s)",
                                     fmt::join(held, " "), opts_.timing.lease_ttl.count())});
      return;
    }
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
  std::map<NodeState, int> count;
  std::string first_failure;
  for (const auto& [name, o] : outcomes_) {
    ++count[o.status];
    if (o.status == NodeState::kFailed && first_failure.empty())
      first_failure = fmt::format("{} at {}: {}", name, o.step, o.error);
  }
  std::vector<std::string> parts;
  for (NodeState s : {NodeState::kDone, NodeState::kFailed, NodeState::kStale, NodeState::kBusy,
                      NodeState::kInterrupted, NodeState::kNotStarted})
    if (count[s]) parts.push_back(fmt::format("{} {}", count[s], Name(s)));
  std::string line = parts.empty() ? "nothing to do" : fmt::format("{}", fmt::join(parts, ", "));
  if (!first_failure.empty()) line += " (first failure: " + first_failure + ")";
  return line;
}

void Engine::RunBatch(const Batch& b, const std::vector<std::string>& todo,
                      const inventory::RolloutPolicy& policy, const Window& window) {
  modules::Drainer& drainer = DrainerFor(b.rollout);
  const std::vector<std::string> scope = ScopeOf(b.rollout);
  const int limit = policy.MaxUnavailable(static_cast<int>(scope.size()));
  // The scheduler's view, before anything is admitted. One that cannot be read is never "no
  // node is out": wait for it (saying so), then pause the run.
  auto state = ReadScheduler(drainer, scope, policy);
  if (!state) {
    for (const auto& n : todo) MarkNotStarted(n);
    return;
  }
  std::set<std::string> drains;
  for (const auto& n : todo)
    if (const NodePlan* np = plan_.FindNode(n); np && np->NeedsDrain()) drains.insert(n);
  BatchAdmission adm(todo, scope, limit, b.canary, std::move(drains), opts_.run_id);
  adm.See(std::move(*state));
  Emit({.kind = RolloutEvent::Kind::kBatchStart, .batch = b.index,
        .batches = static_cast<int>(plan_.batches.size()), .canary = b.canary,
        .message = fmt::format("{} (max_unavailable {}, {} out now)", fmt::join(todo, " "),
                               limit, adm.Out().size())});

  std::vector<std::thread> threads;
  std::vector<std::unique_ptr<NodeRun>> runs;
  milliseconds budget_waited{0};
  std::unique_lock lk(mu_);
  bool fresh_view = true;   // the view was just read
  bool blind = false;       // the last read failed: admit nothing until one succeeds
  auto blind_since = d_.clock->Now();
  plans::Backoff blind_backoff(opts_.timing.poll_initial, opts_.timing.scheduler_poll_max);
  auto refresh = [&] {      // with lk held; released while the scheduler is read
    lk.unlock();
    auto fresh = drainer.Query(scope);
    lk.lock();
    if (!fresh) {
      // A view we cannot refresh is not a view we may admit on: nodes may have gone out.
      if (!blind) {
        blind_since = d_.clock->Now();
        blind_backoff.Reset();
        Emit({.kind = RolloutEvent::Kind::kWait, .batch = b.index, .status = "scheduler",
              .message = fmt::format("{} unavailable ({}); admitting nothing until it answers "
                                     "(up to {}s)", drainer.Name(), fresh.error().message,
                                     policy.scheduler_timeout_s)});
      }
      blind = true;
      if (d_.clock->Now() - blind_since >= std::chrono::seconds(policy.scheduler_timeout_s))
        SchedulerGaveUp(fmt::format("{} could not be read for {}s: {}", drainer.Name(),
                                    policy.scheduler_timeout_s, fresh.error().message));
      return;
    }
    blind = false;
    adm.See(std::move(*fresh));
  };
  auto halting = [&] {
    return dead() || stopping() || !halt_reason_.empty() || paused_ || scheduler_down();
  };
  while (!adm.Idle()) {
    if (!adm.queue().empty() && !fresh_view && !dead() && !stopping()) refresh();
    fresh_view = false;
    while (!blind) {
      const auto now = d_.clock->Now();
      const BatchAdmission::Decision d =
          adm.Next({.stopping = dead() || stopping(), .scheduler_down = scheduler_down(),
                    .failures = failures_, .max_failures = policy.max_failures,
                    .window_open = window.IsOpen(now)});
      using K = BatchAdmission::Decision::Kind;
      if (d.kind == K::kHalt) halt_reason_ = d.reason;
      if (d.kind == K::kPause) {
        paused_ = true;
        if (auto nx = window.NextOpen(now)) next_window_ = Rfc3339(*nx);
      }
      if (d.kind != K::kAdmit) break;
      budget_waited = milliseconds(0);   // something moved: a later block waits afresh
      StartNode(d.node, b, policy, adm, threads, runs);
    }
    if (blind && !adm.queue().empty() && !dead() && !stopping() && !scheduler_down()) {
      // Nothing is admitted while the scheduler cannot be read; look again after a backoff
      // (nodes of ours already running carry on, and wait for it themselves).
      lk.unlock();
      d_.clock->Sleep(blind_backoff.Next());
      lk.lock();
      continue;
    }
    const bool blocked = adm.Blocked();
    // Nodes another plumb run is working on come back when it is done with them: wait for
    // them (as long as a drain may take), not the short wait for nodes nobody works on.
    const std::string other_run = adm.OtherRunHolding();
    const auto wait_cap = other_run.empty()
                              ? opts_.timing.budget_wait
                              : std::chrono::duration_cast<milliseconds>(
                                    std::chrono::seconds(policy.drain_timeout_s));
    if (blocked && !other_run.empty() && budget_waited == milliseconds(0))
      Emit({.kind = RolloutEvent::Kind::kWait, .batch = b.index,
            .message = fmt::format("max_unavailable {} reached with nodes of plumb run {}: "
                                   "waiting for them to return", limit, other_run)});
    if (blocked && budget_waited < wait_cap && !halting()) {
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
    if (blocked || (!adm.queue().empty() && halting())) {
      if (blocked && !halting()) halt_reason_ = adm.BlockedReason();
      if (adm.running() == 0) {
        for (const auto& n : adm.TakeQueue())
          if (!dead()) MarkNotStarted(n);
        break;
      }
    }
    if (adm.running() > 0) cv_.wait(lk);
  }
  lk.unlock();
  for (auto& t : threads) t.join();
  if (b.canary && adm.batch_failures() > 0 && halt_reason_.empty())
    halt_reason_ = "the canary batch failed";
}

void Engine::StartNode(const std::string& node, const Batch& b,
                       const inventory::RolloutPolicy& policy, BatchAdmission& adm,
                       std::vector<std::thread>& threads,
                       std::vector<std::unique_ptr<NodeRun>>& runs) {
  const NodePlan* np = plan_.FindNode(node);
  if (!np) {
    outcomes_[node] = {node, NodeState::kFailed, "plan", "not in the plan's nodes", false};
    ++failures_;
    adm.Ended(node, NodeState::kFailed);
    return;
  }
  std::vector<StepRecord> prior;
  if (auto it = prior_steps_.find(node); it != prior_steps_.end()) prior = it->second;
  std::optional<NodeRecord> pn;
  if (auto it = prior_nodes_.find(node); it != prior_nodes_.end()) pn = it->second;
  runs.push_back(std::make_unique<NodeRun>(*this, *np, b, policy, std::move(prior), pn,
                                           adopt_.count(node) > 0));
  NodeRun* run = runs.back().get();
  threads.emplace_back([this, run, &adm, node] {
    try {
      run->Run();
    } catch (const Dead&) {
    }
    std::lock_guard g(mu_);
    const NodeOutcome& o = run->outcome();
    if (!dead() && o.status == NodeState::kDeferred) {
      // It gave way to an older claim on the budget (another run, an admin): untouched and
      // back in service; it waits for a slot like any node not yet started.
      adm.Requeue(node);
      Emit({.kind = RolloutEvent::Kind::kNote, .node = node, .message = o.error});
    } else {
      if (!dead()) {
        outcomes_[o.node] = o;
        if (o.status == NodeState::kFailed) ++failures_;
        Emit({.kind = RolloutEvent::Kind::kNodeEnd, .node = o.node, .step = o.step,
              .status = std::string(Name(o.status)), .message = o.error});
      }
      // Its slot is recounted from the scheduler's next view: out there (left drained, still
      // down after a resume) it still counts.
      adm.Ended(node, dead() ? NodeState::kInterrupted : o.status);
    }
    cv_.notify_all();
  });
}

RolloutResult Engine::Run() {
  RolloutResult res;
  res.run = opts_.run_id;

  // What an earlier attempt of this run already did.
  if (opts_.resume) {
    auto nodes = d_.journal->Nodes(opts_.run_id);
    auto steps = d_.journal->Steps(opts_.run_id);
    if (!nodes || !steps) {
      res.outcome = RunState::kFailed;
      res.diags.Add(!nodes ? nodes.error() : steps.error());
      return res;
    }
    for (auto& n : *nodes) prior_nodes_[n.node] = n;
    for (auto& s : *steps) prior_steps_[s.node].push_back(s);
  }
  adopt_ = std::set<std::string>(opts_.adopt.begin(), opts_.adopt.end());
  for (const auto& [name, n] : prior_nodes_) {
    if (n.status == NodeState::kDone || n.status == NodeState::kFailed || n.status == NodeState::kStale) {
      NodeOutcome o;
      o.node = name;
      o.status = n.status;
      o.step = n.last_step;
      o.error = n.error;
      outcomes_[name] = o;
      if (n.status == NodeState::kFailed) ++failures_;
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

  ShowInSyncStacks();
  for (const Batch& b : plan_.batches) {
    std::vector<std::string> todo;
    for (const auto& n : b.nodes)
      if (!outcomes_.count(n)) todo.push_back(n);
    // A canary that failed in an earlier attempt of this run (halted, interrupted, crashed)
    // still stops the rollout on --resume: the rest of the fleet must not follow it.
    if (b.canary && halt_reason_.empty())
      for (const auto& n : b.nodes)
        if (auto o = outcomes_.find(n); o != outcomes_.end() && o->second.status == NodeState::kFailed)
          halt_reason_ = fmt::format("the canary batch failed ({} failed)", n);
    if (todo.empty()) continue;
    const inventory::RolloutPolicy* pp = PolicyFor(b.rollout);
    if (!pp && halt_reason_.empty())
      halt_reason_ = fmt::format("the plan has no rollout policy '{}'", b.rollout);
    auto window = pp ? Window::Make(pp->window_cron, pp->window_duration_s) : Result<Window>(Window());
    if (!window && halt_reason_.empty()) halt_reason_ = window.error().message;
    if (!halt_reason_.empty() || paused_ || stopping() || dead() || scheduler_down()) {
      if (!dead())
        for (const auto& n : todo) MarkNotStarted(n);
      continue;
    }
    RunBatch(b, todo, *pp, *window);
    Emit({.kind = RolloutEvent::Kind::kBatchEnd, .batch = b.index,
          .batches = static_cast<int>(plan_.batches.size()), .canary = b.canary});
    if (dead()) break;
  }

  if (dead()) {
    res.outcome = RunState::kCrashed;
  } else {
    bool any_failed = false, any_incomplete = false;
    for (const auto& [n, o] : outcomes_) {
      any_failed |= o.status == NodeState::kFailed;
      any_incomplete |= o.status == NodeState::kStale || o.status == NodeState::kBusy;
    }
    // A journal that cannot be written stops the run as an error, not as a Ctrl-C.
    if (journal_broken_) res.outcome = RunState::kFailed, res.journal_failed = true;
    else if (stopping()) res.outcome = RunState::kInterrupted;
    else if (!halt_reason_.empty()) res.outcome = RunState::kHalted;
    else if (paused_ || scheduler_down()) res.outcome = RunState::kPaused;
    else if (any_failed) res.outcome = RunState::kFailed;
    else if (any_incomplete) res.outcome = RunState::kIncomplete;
    else res.outcome = RunState::kDone;
  }
  for (const auto& [n, o] : outcomes_) res.nodes.push_back(o);
  res.summary = Summary();
  res.halt_reason = halt_reason_;
  if (paused_) {
    res.halt_reason = "outside the maintenance window";
    res.next_window = next_window_;
  } else if (scheduler_down() && res.halt_reason.empty()) {
    res.halt_reason = "the scheduler could not be read: " + scheduler_reason();
  }
  if (journal_broken_ && res.halt_reason.empty())
    res.halt_reason = "the journal could not be written; no new node was started";
  res.diags.Append(diags_);
  if (!dead()) {
    std::string line = res.summary;
    if (!res.halt_reason.empty())
      line += fmt::format("; {}: {}", Name(res.outcome), res.halt_reason);
    // A full disk may free up: try for a while before giving up, so the run row does not stay
    // "running" (`plumb runs` shows a run whose owner is gone as such either way).
    Status s = d_.journal->EndRun(opts_.run_id, res.outcome, Now(), line);
    // (Not cut short by a Ctrl-C: the run's record is what --resume reads; a second one exits.)
    // Bounded: 6 tries 5 s apart (a store that does not answer fails each at once by now).
    for (int i = 0; !s && journal_broken_ && i < 6; ++i) {
      if (i == 0)
        Emit({.kind = RolloutEvent::Kind::kNote,
              .message = "the journal cannot be written (" + s.error().message +
                         "); retrying to record the run's end for 30s"});
      d_.clock->Sleep(milliseconds(5000));
      s = d_.journal->EndRun(opts_.run_id, res.outcome, Now(), line);
    }
    if (!s) res.diags.Add(s.error());
    Emit({.kind = RolloutEvent::Kind::kRunEnd, .status = std::string(Name(res.outcome)),
          .message = line});
  }
  return res;
}

}  // namespace rollout_detail

RolloutResult RunRollout(const Plan& plan, const RolloutOptions& opts, RolloutDeps& deps) {
  rollout_detail::Engine e(plan, opts, deps);
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
