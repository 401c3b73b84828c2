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

#include <fmt/format.h>

#include "modules/marker/marker.h"
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
  bool Drain();
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

  Result<transport::Shell*> ShellNow();
  Result<std::string> ReadBootId();
  nlohmann::json Desired() const;
  /// Action ids the modules still want, from fresh facts; error text if facts are unusable.
  Result<std::vector<modules::Action>> Remaining(const NodeFacts& f) const;
  std::chrono::milliseconds Backoff(std::chrono::milliseconds cur) const;

  Engine& e_;
  const NodePlan& np_;
  const Batch& batch_;
  const inventory::RolloutPolicy& policy_;
  std::vector<StepRecord> prior_;
  std::optional<NodeRecord> prior_node_;
  bool adopted_;
  bool touched_ = false;          // plumb already changed or drained it in this run
  bool drained_by_us_ = false;
  bool admin_ = false;
  std::string admin_reason_;
  bool returned_ = false;
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

 private:
  std::vector<std::string> ScopeOf(const std::string& rollout) const;
  void MarkNotStarted(const std::string& node);
  std::string Summary() const;

  const Plan& plan_;
  const RolloutOptions& opts_;
  RolloutDeps& d_;
  std::atomic<bool> dead_{false};
  std::atomic<bool> journal_broken_{false};
  std::mutex mu_;
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
  if (!drained_by_us_ && !admin_) {
    // A drain call that reported an error may still have taken effect (a timed-out scontrol),
    // and a resumed run past its marker never drained in this process: if the scheduler shows
    // this run's reason, the drain is ours, and the node must say why it stays out.
    auto q = e_.deps().drainer->Query({np_.node});
    if (q)
      if (auto it = q->find(np_.node); it != q->end() && it->second.drain &&
                                        RunOfReason(it->second.reason) == e_.opts().run_id)
        drained_by_us_ = true;
  }
  if (drained_by_us_) {
    // Keep it out of service, and say why where an operator looks first: the scheduler.
    Status s = e_.deps().drainer->Drain(np_.node,
                                        DrainReason(e_.opts().run_id, "failed:" + step + ": " + error));
    (void)s;   // the journal has the failure either way
    out_.left_drained = true;
  } else if (admin_) {
    out_.left_drained = true;   // as the admin left it, reason untouched
  }
  Put("failed", error);
}

void NodeRun::Interrupt(const std::string& step) {
  out_.status = "interrupted";
  out_.step = step;
  out_.left_drained = drained_by_us_ || admin_;
  Put("interrupted");
}

bool NodeRun::ContinueTo(const std::string& next) {
  if (e_.dead()) throw Dead{};
  if (!Stopping()) return true;
  Interrupt(next);
  return false;
}

std::chrono::milliseconds NodeRun::Backoff(milliseconds cur) const {
  return std::min(cur * 2, e_.opts().timing.poll_max);
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
  return left;
}

void NodeRun::Run() {
  started_at_ = e_.Now();
  if (prior_node_ && !prior_node_->started_at.empty()) started_at_ = prior_node_->started_at;
  if (prior_node_) {
    admin_ = prior_node_->admin_drained;
    admin_reason_ = prior_node_->admin_reason;
  }
  for (const auto& s : prior_)
    if (s.step != "probe") touched_ = true;
  touched_ = touched_ || adopted_;
  Put("running");
  e_.Emit({.kind = RolloutEvent::Kind::kNote, .batch = batch_.index, .node = np_.node,
           .message = touched_ ? "continuing" : "starting"});
  if (Steps()) {
    out_.status = "done";
    Put("done");
  }
}

bool NodeRun::Steps() {
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
      return false;
    }
    if (!Check("probe", r)) return false;
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
  // 3. The changes, in the plan's order.
  for (const auto& pa : np_.actions) {
    if (!ContinueTo("apply:" + pa.action.id) || !ApplyAction(pa)) return false;
  }
  // 4. Reboot when any action needs one.
  if (np_.disruption >= Disruption::kReboot) {
    if (!ContinueTo("reboot") || !Reboot()) return false;
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
  auto& drainer = *e_.deps().drainer;
  auto q = drainer.Query({np_.node});
  if (!q) {
    Fail("drain", "cannot read the scheduler: " + q.error().message);
    return false;
  }
  auto it = q->find(np_.node);
  if (it == q->end()) {
    Fail("drain", fmt::format("{} does not know node {}", drainer.Name(), np_.node));
    return false;
  }
  const modules::SchedulerNode& sn = it->second;
  const bool ours = sn.drain && RunOfReason(sn.reason) == e_.opts().run_id;
  if (!admin_ && !ours && (sn.drain || sn.DownOnPurpose())) {
    // Drained (or set down with a reason) before plumb came: remember it (durably) and leave
    // it to whoever took it out.
    admin_ = true;
    admin_reason_ = sn.reason;
    Put("running");
  }
  if (ours) drained_by_us_ = true;
  if (!admin_ && !ours) {
    const std::string reason = DrainReason(e_.opts().run_id, "drain");
    StepResult r = Step("drain", {{"reason", reason}, {"scheduler", std::string(drainer.Name())}},
                        [&] {
                          Status s = drainer.Drain(np_.node, reason);
                          return s ? StepResult::Ok() : StepResult::Failed(s.error().message);
                        });
    // Even a failed drain call may have taken effect: resume it on failure only if it did.
    if (r.outcome == "ok") drained_by_us_ = true;
    if (!Check("drain", r)) return false;
  }
  // Wait until no job runs there. "drained" alone is not enough: a node whose job is still
  // PENDING shows drained at once (testbed gotcha 9), so the running-job count must be zero.
  const auto timeout = std::chrono::seconds(policy_.drain_timeout_s);
  StepResult w = Step("wait-drained", {{"timeout_s", policy_.drain_timeout_s}}, [&] {
    auto start = e_.deps().clock->Now();
    milliseconds wait = e_.opts().timing.poll_initial;
    std::string last;
    for (;;) {
      auto s = drainer.Query({np_.node});
      if (s) {
        auto n = s->find(np_.node);
        if (n != s->end()) {
          // Drained, or set down on purpose by an admin (no drain flag, and no job can run).
          if ((n->second.drained || n->second.DownOnPurpose()) && n->second.running_jobs == 0)
            return StepResult::Ok({{"waited_ms", MillisBetween(start, e_.deps().clock->Now())}});
          last = n->second.jobs.empty() ? n->second.state
                                        : fmt::format("{}", fmt::join(n->second.jobs, ", "));
        }
      } else {
        last = s.error().message;
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
  return Check("wait-drained", w);
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
    Status s = m->Apply(ctx, a);
    if (!s) {
      shell_.reset();   // whatever broke, start the next step on a fresh connection
      return StepResult::Failed(s.error().message);
    }
    return StepResult::Ok();
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
    Status s = kMarker.Apply(ctx, modules::marker::WriteAction(e_.plan().source.commit,
                                                               e_.opts().run_id, e_.Now()));
    if (!s) {
      shell_.reset();
      return StepResult::Failed("writing the marker: " + s.error().message);
    }
    return StepResult::Ok();
  });
  return Check("marker", r);
}

bool NodeRun::ReturnToService() {
  auto& drainer = *e_.deps().drainer;
  if (admin_) {
    StepResult r = Step("resume", {{"admin_reason", admin_reason_}}, [&] {
      return StepResult::Skipped("left drained: drained before plumb (" + admin_reason_ + ")");
    });
    out_.left_drained = true;
    return Check("resume", r);
  }
  StepResult r = Step("resume", {}, [&] {
    // After a reboot the scheduler may still see the node as down until its daemon registers
    // again; resuming before that would be undone or refused.
    auto start = e_.deps().clock->Now();
    milliseconds wait = e_.opts().timing.poll_initial;
    for (;;) {
      auto q = drainer.Query({np_.node});
      if (q) {
        auto n = q->find(np_.node);
        if (n != q->end() && !n->second.drain && !n->second.down)
          return StepResult::Skipped("already in service");
        if (n != q->end() && n->second.drain &&
            RunOfReason(n->second.reason) != e_.opts().run_id) {
          drained_by_us_ = false;   // not ours to resume, nor to re-label
          admin_ = true;
          admin_reason_ = n->second.reason;
          return StepResult::Skipped("left drained: drained by someone else meanwhile (" +
                                     n->second.reason + ")");
        }
        if (n != q->end() && !n->second.down) break;
      }
      if (e_.dead()) throw Dead{};
      if (Stopping()) return StepResult::Interrupted();
      if (e_.deps().clock->Now() - start >= e_.opts().timing.resume_timeout)
        return StepResult::Failed(fmt::format("{} still sees it down after {}s", drainer.Name(),
                                              e_.opts().timing.resume_timeout.count()));
      e_.deps().clock->Sleep(wait);
      wait = std::min(Backoff(wait), milliseconds(2000));
    }
    Status s = drainer.Resume(np_.node);
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
  return Check("resume", r);
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

std::string Engine::Summary() const {
  std::map<std::string, int> count;
  std::string first_failure;
  for (const auto& [name, o] : outcomes_) {
    ++count[o.status];
    if (o.status == "failed" && first_failure.empty())
      first_failure = fmt::format("{} at {}: {}", name, o.step, o.error);
  }
  std::vector<std::string> parts;
  for (const char* s : {"done", "failed", "stale", "interrupted", "not-started"})
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

  int total = 0;
  for (const auto& b : plan_.batches) total += static_cast<int>(b.nodes.size());
  Emit({.kind = RolloutEvent::Kind::kRunStart,
        .batches = static_cast<int>(plan_.batches.size()),
        .message = fmt::format("{} {} node(s) in {} batch(es), commit {}",
                               opts_.resume ? "continuing" : "applying", total,
                               plan_.batches.size(), plan_.source.commit.substr(0, 12))});

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
    auto pit = plan_.rollouts.find(b.rollout);
    if (pit == plan_.rollouts.end() && halt_reason.empty())
      halt_reason = fmt::format("the plan has no rollout policy '{}'", b.rollout);
    auto window = pit != plan_.rollouts.end()
                      ? Window::Make(pit->second.window_cron, pit->second.window_duration_s)
                      : Result<Window>(Window());
    if (!window && halt_reason.empty()) halt_reason = window.error().message;
    if (!halt_reason.empty() || paused || stopping() || dead()) {
      if (!dead())
        for (const auto& n : todo) MarkNotStarted(n);
      continue;
    }
    const inventory::RolloutPolicy& policy = pit->second;
    const std::vector<std::string> scope = ScopeOf(b.rollout);
    const int limit = policy.MaxUnavailable(static_cast<int>(scope.size()));
    auto state = d_.drainer->Query(scope);
    if (!state) {
      halt_reason = "cannot read the scheduler: " + state.error().message;
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
    auto refresh = [&] {      // with lk held; released while the scheduler is read
      lk.unlock();
      auto fresh = d_.drainer->Query(scope);
      lk.lock();
      if (!fresh) return;     // keep the last view: avail only ever shrinks without a read
      state = std::move(fresh);
      avail = limit - count_out();
    };
    while (!queue.empty() || running > 0) {
      if (!queue.empty() && !fresh_view && !dead() && !stopping()) refresh();
      fresh_view = false;
      while (!queue.empty()) {
        if (dead() || stopping()) break;
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
        threads.emplace_back([this, run, &running, &holding, &batch_failures, node] {
          try {
            run->Run();
          } catch (const Dead&) {
          }
          std::lock_guard g(mu_);
          const NodeOutcome& o = run->outcome();
          if (!dead()) {
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
      bool blocked = !queue.empty() && running == 0;
      if (blocked && budget_waited < opts_.timing.budget_wait && !dead() && !stopping() &&
          halt_reason.empty() && !paused) {
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
      if (blocked || (!queue.empty() && (dead() || stopping() || !halt_reason.empty() || paused))) {
        if (blocked && halt_reason.empty() && !paused && !dead() && !stopping())
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
    bool any_failed = false, any_stale = false;
    for (const auto& [n, o] : outcomes_) {
      any_failed |= o.status == "failed";
      any_stale |= o.status == "stale";
    }
    if (stopping()) res.outcome = "interrupted";
    else if (!halt_reason.empty()) res.outcome = "halted";
    else if (paused) res.outcome = "paused";
    else if (any_failed) res.outcome = "failed";
    else if (any_stale) res.outcome = "incomplete";
    else res.outcome = "done";
  }
  for (const auto& [n, o] : outcomes_) res.nodes.push_back(o);
  res.summary = Summary();
  res.halt_reason = halt_reason;
  if (paused) {
    res.halt_reason = "outside the maintenance window";
    res.next_window = next_window;
  }
  res.diags.Append(diags_);
  if (!dead()) {
    std::string line = res.summary;
    if (!res.halt_reason.empty()) line += "; " + res.outcome + ": " + res.halt_reason;
    if (Status s = d_.journal->EndRun(opts_.run_id, res.outcome, Now(), line); !s)
      res.diags.Add(s.error());
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

std::string DrainReason(const std::string& run, const std::string& step) {
  std::string r = "plumb:" + run + ":" + step;
  for (char& c : r)
    if (c == '"' || c == '\'' || c == '\n' || c == '\r' || c == '\\' || c == '`' || c == '$')
      c = ' ';
  // Slurm keeps reasons short in its listings; the journal has the whole error.
  if (r.size() > 200) r = r.substr(0, 197) + "...";
  return r;
}

std::string RunOfReason(const std::string& reason) {
  if (reason.rfind("plumb:", 0) != 0) return {};
  auto end = reason.find(':', 6);
  std::string run = reason.substr(6, end == std::string::npos ? std::string::npos : end - 6);
  // Slurm may append " [user@time]" in some listings.
  if (auto sp = run.find(' '); sp != std::string::npos) run.resize(sp);
  return run;
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
