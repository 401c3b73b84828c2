// The rollout engine where runs and operators meet: node leases (one writer per node), another
// plumb run's drain, a node a failed run left drained, a scheduler that cannot be read, waived
// differences, an edited plan, heartbeats while a drain waits, a journal that cannot be written.
#include <doctest/doctest.h>

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <future>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "fakes/fake_cluster.h"
#include "fakes/rollout_bed.h"
#include "plans/plan/planner.h"
#include "plans/plan/waivers.h"
#include "plans/rollout/rollout.h"

using namespace plumb;
using fakes::FakeCluster;
using modules::Disruption;

namespace {

// The shared bed (fakes/rollout_bed.h), no canary, with leases and the options every run here
// starts from.
struct Bed : fakes::RolloutBed {
  plans::RolloutOptions opts;

  explicit Bed(int n, int max_unavailable = 2, int canary = 0)
      : RolloutBed("safety", n, max_unavailable, canary) {
    policy.scheduler_timeout_s = 600;
    plan_now = "2027-01-01T00:00:00Z";
    opts.run_id = run_id;
    opts.cluster = &cluster;
    opts.owner_host = "ctl";
    opts.owner_pid = 1;
    opts.timing.reboot_grace = std::chrono::seconds(30);
  }
  plans::RolloutResult Apply(bool with_leases = true) {
    if (plan.batches.empty() && plan.nodes.empty()) MakePlan();
    REQUIRE(journal->BeginRun(Record()).ok());
    plans::RolloutDeps d = Deps(with_leases);
    return plans::RunRollout(plan, opts, d);
  }
};


// Runs the rollout of b.plan with `obs` (the run begun in `journal`, b's own by default).
plans::RolloutResult RunWith(Bed& b, plans::Observer& obs, bool leases = true, bool begin = true,
                             plans::Journal* journal = nullptr,
                             const std::function<void(plans::RolloutDeps&)>& tweak = {}) {
  plans::Journal& j = journal ? *journal : *b.journal;
  if (begin) REQUIRE(j.BeginRun(b.Record("x")).ok());
  plans::RolloutDeps d = b.Deps(leases);
  d.journal = &j;
  d.observer = &obs;
  if (tweak) tweak(d);
  return plans::RunRollout(b.plan, b.opts, d);
}

}  // namespace

TEST_CASE("rollout: a node leased by another live run is left alone and reported busy") {
  // Given n02 leased by another run for an hour,
  Bed b(3);
  b.leases.Hold("n02", "20270101-000000-ffff", std::chrono::hours(1));
  auto r = b.Apply();
  // then n02 is untouched (no drain, no change), reported busy, and the others converge.
  CHECK(Bed::StatusOf(r, "n02") == "busy");
  CHECK(b.fake.CallsOf("n02").empty());
  CHECK(b.fake.node("n02").running["kernel"] == "k1");
  CHECK(Bed::StatusOf(r, "n01") == "done");
  CHECK(Bed::StatusOf(r, "n03") == "done");
  CHECK(r.outcome == plans::RunState::kIncomplete);   // exit 3: not everything was applied, nothing failed
  for (const auto& o : r.nodes)
    if (o.node == "n02") CHECK(o.error.find("20270101-000000-ffff") != std::string::npos);
  // Its lease still belongs to the other run; ours were released after each node returned.
  CHECK(b.leases.HolderOf("n02") == "20270101-000000-ffff");
  CHECK(b.leases.HolderOf("n01").empty());
  CHECK(b.leases.HolderOf("n03").empty());
}

TEST_CASE("rollout: a node unreachable when its lease is to be taken is left alone, not failed") {
  // Given n02 unreachable at that moment (another run rebooting it: seen in CI under load),
  Bed b(3);
  b.leases.unreachable.insert("n02");
  auto r = b.Apply();
  // then n02 is untouched and reported, not failed nor drained; the others converge; exit 3.
  CHECK(Bed::StatusOf(r, "n02") == "busy");
  CHECK(b.fake.CallsOf("n02").empty());
  CHECK_FALSE(b.fake.node("n02").drain);
  for (const auto& o : r.nodes)
    if (o.node == "n02") CHECK(o.error.find("unreachable when its lease was to be taken") != std::string::npos);
  CHECK(Bed::StatusOf(r, "n01") == "done");
  CHECK(Bed::StatusOf(r, "n03") == "done");
  CHECK(r.outcome == plans::RunState::kIncomplete);
}

TEST_CASE("rollout: an expired lease is taken over, and the journal records whose it was") {
  Bed b(1);
  b.leases.Hold("n01", "20261231-000000-dead", std::chrono::seconds(-5));
  auto r = b.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  auto steps = b.journal->Steps(b.run_id, "n01");
  REQUIRE(steps.ok());
  REQUIRE_FALSE(steps->empty());
  CHECK(steps->front().step == "lease");
  CHECK(steps->front().detail["took_over_from"]["run"] == "20261231-000000-dead");
}

TEST_CASE("rollout: a node another plumb run drained (not failed) is busy, not admin-drained") {
  // Given n01 drained by another plumb run in progress (no lease: an older plumb, or a crash),
  Bed b(2);
  (void)b.fake.Drain("n01", "plumb:20261231-000000-beef:wait-drained");
  b.MakePlan();
  auto r = b.Apply();
  // then it is neither changed nor resumed (the old bug: changed again, left drained), and the
  // plan shows who holds it.
  CHECK(Bed::StatusOf(r, "n01") == "busy");
  CHECK(b.fake.node("n01").running["kernel"] == "k1");
  CHECK(b.fake.Count("n01", "resume") == 0);
  CHECK(b.fake.node("n01").reason == "plumb:20261231-000000-beef:wait-drained");
  const plans::NodePlan* np = b.plan.FindNode("n01");
  REQUIRE(np);
  CHECK(np->held_by_run == "20261231-000000-beef");
  CHECK_FALSE(np->admin_drained);
  CHECK(Bed::StatusOf(r, "n02") == "done");
}

TEST_CASE("rollout: a node a failed run left drained is taken over and returned to service") {
  // Given n01 left drained by a failed step of an earlier run, its change still to do,
  Bed b(1);
  (void)b.fake.Drain("n01", "plumb:20261231-000000-beef:failed:health:1: gate exited 1");
  b.MakePlan();
  const plans::NodePlan* np = b.plan.FindNode("n01");
  REQUIRE(np);
  CHECK(np->left_by_run == "20261231-000000-beef");
  CHECK(np->left_at_step == "health:1");
  auto r = b.Apply();
  // then this run changes it and returns it to service, its old reason gone.
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(b.fake.node("n01").running["kernel"] == "k2");
  CHECK_FALSE(b.fake.node("n01").drain);
  CHECK(b.fake.node("n01").reason.empty());
}

TEST_CASE("rollout: an in-sync node a failed run left drained is verified and returned") {
  Bed b(1);
  b.desired["n01"].desired = {{"kernel", "k1"}, {"sysctl", "s1"}};   // nothing to change
  (void)b.fake.Drain("n01", "plumb:20261231-000000-beef:failed:verify: still differs");
  b.MakePlan();
  const plans::NodePlan* np = b.plan.FindNode("n01");
  REQUIRE(np);
  CHECK(np->return_to_service);
  CHECK(np->actions.empty());
  REQUIRE(b.plan.batches.size() == 1);
  auto r = b.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK_FALSE(b.fake.node("n01").drain);
  CHECK(b.fake.Count("n01", "set ") == 0);     // nothing changed
  CHECK(b.fake.Count("n01", "reboot") == 0);
  CHECK(b.fake.Count("n01", "resume") == 1);
}

TEST_CASE("rollout: a scheduler that cannot be read admits nothing, then the run continues") {
  // Given the scheduler down for 5 minutes from the start (scheduler_timeout 10m),
  Bed b(4, 2);
  b.MakePlan();
  b.fake.scheduler_down_until = b.clock.Now() + std::chrono::minutes(5);
  auto r = b.Apply();
  // then nothing is drained while it is down, no node fails, and all converge afterwards.
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(b.fake.calls_while_down == 0);
  CHECK(b.fake.max_unavailable_seen() <= 2);
  for (int i = 1; i <= 4; ++i) CHECK(b.fake.node(fmt::format("n{:02}", i)).running["kernel"] == "k2");
  auto waits = b.observer.Of(plans::RolloutEvent::Kind::kWait);
  REQUIRE_FALSE(waits.empty());
  CHECK(waits.front().status == "scheduler");
}

TEST_CASE("rollout: a scheduler down past its timeout pauses the run; no node fails") {
  Bed b(3, 2);
  b.policy.scheduler_timeout_s = 120;
  b.MakePlan();
  b.fake.scheduler_down_until = b.clock.Now() + std::chrono::hours(2);
  auto r = b.Apply();
  CHECK(r.outcome == plans::RunState::kPaused);
  CHECK(r.halt_reason.find("scheduler") != std::string::npos);
  for (const auto& o : r.nodes) CHECK(o.status != plans::NodeState::kFailed);
  for (int i = 1; i <= 3; ++i) CHECK_FALSE(b.fake.node(fmt::format("n{:02}", i)).drain);
  CHECK(b.fake.calls_while_down == 0);
}

TEST_CASE("rollout: the scheduler going down mid-rollout keeps in-flight nodes where they are") {
  // n01 is drained and rebooting when the scheduler goes down past its timeout: it is not
  // failed (interrupted, resumable); nothing new is admitted.
  Bed b(3, 1);
  b.policy.scheduler_timeout_s = 60;
  b.MakePlan();
  b.fake.RunJob("n01", std::chrono::seconds(30));
  // Down from 10 s in (n01 waits for its job then) for an hour.
  struct Downer : plans::Observer {
    Bed* b;
    void OnEvent(const plans::RolloutEvent& e) override {
      b->observer.OnEvent(e);
      if (e.kind == plans::RolloutEvent::Kind::kStep && e.step == "wait-drained" && e.status == "start")
        b->fake.scheduler_down_until = b->clock.Now() + std::chrono::hours(1);
    }
  } downer;
  downer.b = &b;
  auto r = RunWith(b, downer);
  CHECK(r.outcome == plans::RunState::kPaused);
  CHECK(Bed::StatusOf(r, "n01") == "interrupted");
  for (const auto& o : r.nodes) CHECK(o.status != plans::NodeState::kFailed);
  CHECK(b.fake.node("n01").drain);              // still out, where it was
  CHECK_FALSE(b.fake.node("n02").drain);        // nobody new admitted
  CHECK_FALSE(b.fake.node("n03").drain);
}

TEST_CASE("rollout: a waived difference is never changed, and verify does not expect it") {
  // sysctl differs on n01 but a waiver covers it; the kernel change goes ahead.
  Bed b(1);
  b.fake.node("n01").running["sysctl"] = "s0";
  b.fake.node("n01").installed["sysctl"] = "s0";
  inventory::Waiver w;
  w.nodes = "n[01-02,05]";
  w.keys = "sysctl*";
  w.reason = "vendor tuning";
  w.owner = "alice";
  w.expires = "2099-12-31";
  b.cluster.waivers.push_back(w);
  b.MakePlan();
  const plans::NodeWaived* nw = b.plan.FindWaived("n01");
  REQUIRE(nw);
  REQUIRE(nw->changes.size() == 1);
  CHECK(nw->changes[0].change.action.module == "sysctl");
  const plans::NodePlan* np = b.plan.FindNode("n01");
  REQUIRE(np);
  for (const auto& pa : np->actions) CHECK(pa.action.module != "sysctl");
  auto r = b.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(b.fake.Count("n01", "set sysctl") == 0);
  CHECK(b.fake.node("n01").running["sysctl"] == "s0");
  CHECK(b.fake.node("n01").running["kernel"] == "k2");
}

TEST_CASE("rollout: an expired waiver waives nothing") {
  Bed b(1);
  b.fake.node("n01").running["sysctl"] = "s0";
  b.fake.node("n01").installed["sysctl"] = "s0";
  inventory::Waiver w;
  w.nodes = "n01";
  w.keys = "sysctl";
  w.expires = "2026-01-01";
  b.cluster.waivers.push_back(w);
  b.MakePlan();
  CHECK(b.plan.FindWaived("n01") == nullptr);
  const plans::NodePlan* np = b.plan.FindNode("n01");
  REQUIRE(np);
  CHECK(std::any_of(np->actions.begin(), np->actions.end(),
                    [](const plans::PlannedAction& pa) { return pa.action.module == "sysctl"; }));
}

TEST_CASE("rollout: an action the commit and facts do not give (an edited plan) is refused") {
  Bed b(1);
  b.MakePlan();
  REQUIRE(b.plan.nodes.size() == 1);
  b.plan.nodes[0].actions[0].action.after = "k9-evil";   // re-sealed by someone: digest fine
  b.opts.desired["n01"] = b.desired["n01"].desired;
  auto r = b.Apply();
  CHECK(Bed::StatusOf(r, "n01") == "failed");
  CHECK(b.fake.Count("n01", "set ") == 0);
  CHECK(b.fake.Count("n01", "drain") == 0);
  for (const auto& o : r.nodes) CHECK(o.error.find("does not follow from commit") != std::string::npos);
}

TEST_CASE("rollout: the engine enforces the commit's policy, not the plan's copy") {
  // The plan's copy says max_unavailable 10; the commit says 1.
  Bed b(4, 10);
  b.MakePlan();
  inventory::RolloutPolicy strict = b.policy;
  strict.max_unavailable_count = 1;
  b.opts.policies["roll"] = strict;
  auto r = b.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(b.fake.max_unavailable_seen() == 1);
}

TEST_CASE("rollout: while a drain waits for a job, heartbeats name the job and its time left") {
  Bed b(1);
  b.opts.timing.heartbeat = std::chrono::seconds(30);
  b.fake.RunJob("n01", std::chrono::minutes(5));
  auto r = b.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  auto waits = b.observer.Of(plans::RolloutEvent::Kind::kWait);
  REQUIRE(waits.size() >= 3);   // 5 minutes of waiting, a beat every 30 s
  CHECK(waits.front().node == "n01");
  CHECK(waits.front().step == "wait-drained");
  CHECK(waits.front().message.find("42 (alice: train, ") != std::string::npos);
  CHECK(waits.front().message.find("left") != std::string::npos);
  CHECK(waits.front().message.find("of 1h") != std::string::npos);
}

TEST_CASE("rollout: a failed step's Slurm reason holds the error's last line, not the command") {
  Bed b(1);
  b.fake.node("n01").apply_fails = true;
  auto r = b.Apply();
  CHECK(Bed::StatusOf(r, "n01") == "failed");
  const std::string reason = b.fake.node("n01").reason;
  CHECK(reason.rfind("plumb:" + b.run_id + ":failed:apply:kernel.install: ", 0) == 0);
  CHECK(reason.find("'set kernel") == std::string::npos);
  CHECK(reason.find("E: Sub-process /usr/bin/dpkg returned an error code (1)") != std::string::npos);
  CHECK(b.leases.HolderOf("n01").empty());   // released once the failure is recorded
}

TEST_CASE("drain reasons: parse, failure reasons, last meaningful line") {
  auto p = plans::ParsePlumbReason("plumb:r1:failed:apply:nvidia_driver.install: E: no such version");
  REQUIRE(p);
  CHECK(p->run == "r1");
  CHECK(p->failed);
  CHECK(p->step == "apply:nvidia_driver.install");
  CHECK(p->error == "E: no such version");
  auto q = plans::ParsePlumbReason("plumb:r2:wait-drained");
  REQUIRE(q);
  CHECK_FALSE(q->failed);
  CHECK(q->step == "wait-drained");
  CHECK_FALSE(plans::ParsePlumbReason("RMA gpu3"));
  CHECK(plans::LastMeaningfulLine("'DEBIAN_FRONTEND=noninteractive apt-get install -y x=1' exited "
                                  "100: Reading package lists...\nE: Version '1' for 'x' was not "
                                  "found\n\n") == "E: Version '1' for 'x' was not found");
  CHECK(plans::LastMeaningfulLine("'cmd --long' exited 1: boom") == "boom");
  const std::string r = plans::FailureReason(
      "r1", "apply:x", "'" + std::string(300, 'a') + "' exited 100: E: Unable to locate package x");
  CHECK(r == "plumb:r1:failed:apply:x: E: Unable to locate package x");
}

namespace {

// A journal on a disk that fills up: every write fails while `full` is set.
class FullDiskJournal final : public plans::Journal {
 public:
  explicit FullDiskJournal(plans::Journal& j) : j_(j) {}
  std::atomic<bool> full{false};
  std::atomic<int> end_attempts{0};
  Diagnostic Enospc() const {
    return Diagnostic::Error("journal.sqlite", "journal: database or disk is full");
  }
  Status BeginRun(const plans::RunRecord& r) override { return j_.BeginRun(r); }
  Status EndRun(const std::string& run, plans::RunState outcome, const std::string& at,
                const std::string& summary) override {
    ++end_attempts;
    if (full) return Enospc();
    return j_.EndRun(run, outcome, at, summary);
  }
  Status ReopenRun(const std::string& run, const std::string& h, int64_t pid) override {
    return j_.ReopenRun(run, h, pid);
  }
  Result<std::optional<plans::RunRecord>> GetRun(const std::string& run) override { return j_.GetRun(run); }
  Result<std::vector<plans::RunRecord>> ListRuns(int limit) override { return j_.ListRuns(limit); }
  Result<int64_t> StepIntent(const plans::StepRecord& s) override {
    if (full) return Enospc();
    return j_.StepIntent(s);
  }
  Status StepOutcome(int64_t id, plans::StepState o, const std::string& e, const std::string& at,
                     int64_t ms, const nlohmann::json& d) override {
    if (full) return Enospc();
    return j_.StepOutcome(id, o, e, at, ms, d);
  }
  Result<std::vector<plans::StepRecord>> Steps(const std::string& run, const std::string& node) override {
    return j_.Steps(run, node);
  }
  Result<std::vector<plans::StepRecord>> History(const std::string& node, int limit) override {
    return j_.History(node, limit);
  }
  Status PutNode(const plans::NodeRecord& n) override {
    if (full) {
      if (n.status == plans::NodeState::kNotStarted) ++not_started_writes_refused;
      return Enospc();
    }
    return j_.PutNode(n);
  }
  std::atomic<int> not_started_writes_refused{0};
  Result<std::vector<plans::NodeRecord>> Nodes(const std::string& run) override { return j_.Nodes(run); }
  Status SaveFacts(const std::string& run, const std::string& node, const std::string& phase,
                   const std::string& digest, const nlohmann::json& facts,
                   const std::string& at) override {
    if (full) return Enospc();
    return j_.SaveFacts(run, node, phase, digest, facts, at);
  }
  Result<bool> AcquireLock(const plans::LockInfo& w, const std::string& now, plans::LockInfo* h) override {
    return j_.AcquireLock(w, now, h);
  }
  Status RenewLock(const plans::LockInfo& m, const std::string& e) override { return j_.RenewLock(m, e); }
  Status ReleaseLock(const plans::LockInfo& m) override { return j_.ReleaseLock(m); }
  Status ForceUnlock(const std::string& r) override { return j_.ForceUnlock(r); }
  Result<std::optional<plans::LockInfo>> GetLock(const std::string& c) override { return j_.GetLock(c); }
  Result<std::optional<plans::LockInfo>> LockOfRun(const std::string& r) override { return j_.LockOfRun(r); }

 private:
  plans::Journal& j_;
};

}  // namespace

TEST_CASE("rollout: a journal that cannot be written stops the run as an error, recorded later") {
  // The disk fills while n01 waits for its job; space returns a little later.
  Bed b(2, 1);
  b.MakePlan();
  b.fake.RunJob("n01", std::chrono::minutes(2));
  FullDiskJournal journal(*b.journal);
  struct Filler : plans::Observer {
    FullDiskJournal* j;
    void OnEvent(const plans::RolloutEvent& e) override {
      if (e.kind == plans::RolloutEvent::Kind::kWait && e.node == "n01") j->full = true;
      // The run's end is retried: the second attempt finds space again.
      if (e.kind == plans::RolloutEvent::Kind::kNote &&
          e.message.find("retrying to record the run's end") != std::string::npos)
        j->full = false;
    }
  } filler;
  filler.j = &journal;
  auto r = RunWith(b, filler, true, true, &journal);
  CHECK(r.outcome == plans::RunState::kFailed);      // an error (exit 1), not "interrupted" (130)
  CHECK(r.journal_failed);
  CHECK(b.fake.Count("n02", "drain") == 0);   // nothing new started
  CHECK(journal.end_attempts >= 2);
  auto run = b.journal->GetRun(b.run_id);
  REQUIRE(run.ok());
  REQUIRE(run->has_value());
  CHECK((*run)->outcome == plans::RunState::kFailed);   // recorded once space returned
}

TEST_CASE("rollout: once the journal is broken, the nodes not started are not written one by one") {
  // A store that stopped answering fails each write after its retry window: one write per node
  // not started was one window each (1,000 nodes: hours). They are left without a row (read
  // as not started by --resume), and the run ends at once.
  Bed b(8, 1);
  b.MakePlan();
  b.fake.RunJob("n01", std::chrono::minutes(2));
  FullDiskJournal journal(*b.journal);
  struct Down : plans::Observer {
    FullDiskJournal* j;
    void OnEvent(const plans::RolloutEvent& e) override {
      if (e.kind == plans::RolloutEvent::Kind::kWait && e.node == "n01") j->full = true;
    }
  } down;
  down.j = &journal;
  auto r = RunWith(b, down, true, true, &journal);
  CHECK(r.outcome == plans::RunState::kFailed);
  CHECK(r.journal_failed);
  for (const char* n : {"n02", "n03", "n08"}) {
    CAPTURE(n);
    CHECK(b.StatusOf(r, n) == "not-started");
    CHECK(b.fake.Count(n, "drain") == 0);
  }
  CHECK(journal.not_started_writes_refused == 0);   // not asked again for each node
  // --resume reads the nodes without a row as not started, and finishes the run.
  journal.full = false;
  b.opts.resume = true;
  auto again = RunWith(b, b.observer, true, false, &journal);
  CHECK(again.outcome == plans::RunState::kDone);
  for (const char* n : {"n01", "n02", "n08"}) CHECK(b.fake.Count(n, "set kernel") == 1);
}

TEST_CASE("rollout: without the cluster lock, node leases are no longer renewed") {
  // The lock keeper gives up (lost, or the store does not answer) while n01 holds its lease:
  // the renewer stops renewing it and says so; another runner may take the run over.
  Bed b(2, 1);
  b.MakePlan();
  b.opts.timing.lease_renew = std::chrono::milliseconds(5);
  std::atomic<bool> expiring{false};
  struct Watch : plans::Observer {
    std::atomic<bool>* expiring;
    std::mutex mu;
    std::condition_variable cv;
    bool told = false;
    std::string note;
    void OnEvent(const plans::RolloutEvent& e) override {
      if (e.kind == plans::RolloutEvent::Kind::kNote &&
          e.message.find("no longer renewed") != std::string::npos) {
        std::lock_guard lock(mu);
        told = true;
        note = e.message;
        cv.notify_all();
      }
      // n01 holds its lease and starts its next step: the lock is gone from here on. The step
      // waits until the renewer has had its say (or a minute: the test then fails).
      if (e.kind == plans::RolloutEvent::Kind::kStep && e.node == "n01" && e.step == "probe" &&
          e.status == "start") {
        expiring->store(true);
        std::unique_lock lock(mu);
        cv.wait_for(lock, std::chrono::seconds(60), [&] { return told; });
      }
    }
  } watch;
  watch.expiring = &expiring;
  auto r = RunWith(b, watch, true, true, nullptr,
                   [&](plans::RolloutDeps& d) { d.lock_expiring = [&] { return expiring.load(); }; });
  CHECK(watch.told);
  CHECK(watch.note.find("the leases of n01 are no longer renewed") != std::string::npos);
  CHECK(r.outcome == plans::RunState::kInterrupted);
  CHECK(b.fake.Count("n02", "drain") == 0);
}

TEST_CASE("rollout: a drain the scheduler lost (a restart) is set again before anything changes") {
  // Right after n01 drained, Slurm restarts without the drain and schedules a job there.
  Bed b(1);
  b.MakePlan();
  struct Forget : plans::Observer {
    Bed* b;
    bool done = false;
    void OnEvent(const plans::RolloutEvent& e) override {
      if (!done && e.kind == plans::RolloutEvent::Kind::kStep && e.step == "wait-drained" &&
          e.status == "ok") {
        done = true;
        b->fake.node("n01").drain = false;
        b->fake.node("n01").reason.clear();
        b->fake.RunJob("n01", std::chrono::minutes(3));
      }
    }
  } forget;
  forget.b = &b;
  auto r = RunWith(b, forget, false);
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(b.fake.Count("n01", "drain") == 2);    // drained again
  CHECK(b.fake.violations().empty());          // nothing changed while the new job ran
  CHECK(b.fake.node("n01").running["kernel"] == "k2");
}

TEST_CASE("rollout: another run's drain at the same moment: the newer claim gives way, untouched") {
  // max_unavailable 1. As plumb drains n01, another run (another journal) drains n03. Two
  // are out: the other run's claim sorts first (same second, older run id), so n01 is
  // returned to service untouched, and admitted again once n03 is back.
  Bed b(3, 1);
  b.MakePlan();
  b.fake.other_run_drains["n01"] = "n03";
  auto r = b.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  auto calls = b.fake.CallsOf("n01");
  REQUIRE(calls.size() >= 3);
  CHECK(calls[0] == "drain plumb:" + b.run_id + ":drain");
  CHECK(calls[1] == "resume");                 // gave way before any change
  CHECK(calls[2] == "drain plumb:" + b.run_id + ":drain");
  CHECK(b.fake.violations().empty());
  for (const char* n : {"n01", "n02", "n03"}) CHECK(b.fake.node(n).running["kernel"] == "k2");
  auto steps = b.journal->Steps(b.run_id, "n01");
  REQUIRE(steps.ok());
  bool undrain = false;
  for (const auto& s : *steps) undrain |= s.step == "undrain" && s.outcome == plans::StepState::kOk;
  CHECK(undrain);
}


TEST_CASE("rollout: the scheduler down past its timeout mid-batch pauses the run (no deadlock)") {
  // Review finding: with nodes still queued in a batch, the admission loop gave up on the
  // scheduler while holding its own lock, and locked it again: the run never returned.
  Bed b(5, 2);
  b.policy.scheduler_timeout_s = 60;
  b.MakePlan();
  (void)b.fake.Drain("n05", "admin: fan");   // after planning: the batch cannot start all at once
  struct Down : plans::Observer {
    Bed* b;
    void OnEvent(const plans::RolloutEvent& e) override {
      if (e.kind == plans::RolloutEvent::Kind::kNodeEnd && e.node == "n01")
        b->fake.scheduler_down_until = b->clock.Now() + std::chrono::hours(1);
    }
  } down;
  down.b = &b;
  auto fut = std::async(std::launch::async, [&] { return RunWith(b, down); });
  REQUIRE(fut.wait_for(std::chrono::seconds(120)) == std::future_status::ready);
  auto r = fut.get();
  CHECK(r.outcome == plans::RunState::kPaused);
  for (const auto& o : r.nodes) CHECK(o.status != plans::NodeState::kFailed);
}

TEST_CASE("rollout: --resume re-checks a node that was busy: changed by the other run, it is stale") {
  // Review finding: a `lease` step made a busy node look "touched", so --resume skipped its
  // stale check and undid what the other run had done.
  Bed b(2);
  b.MakePlan();
  b.leases.Hold("n02", "20261231-000000-ffff", std::chrono::hours(1));
  fakes::RecordingObserver ev;
  auto first = RunWith(b, ev);
  CHECK(Bed::StatusOf(first, "n02") == "busy");
  // The other run converges n02 to k3 and lets it go.
  b.fake.node("n02").running["kernel"] = "k3";
  b.fake.node("n02").installed["kernel"] = "k3";
  REQUIRE(b.leases.Release("n02", {"20261231-000000-ffff", "other-host", 4242, "bob", 0}).ok());
  b.opts.resume = true;
  auto again = RunWith(b, ev, true, /*begin=*/false);
  CHECK(Bed::StatusOf(again, "n02") == "stale");
  CHECK(b.fake.node("n02").running["kernel"] == "k3");   // not reverted
  CHECK(b.fake.Count("n02", "set ") == 0);
}

TEST_CASE("rollout: --resume of nodes another run converged meanwhile: done, untouched, the run ends") {
  // Issue 31: they were called stale and every --resume exited 3 ("continue with --resume").
  Bed b(2);
  b.MakePlan();
  b.leases.Hold("n02", "20261231-000000-ffff", std::chrono::hours(1));
  fakes::RecordingObserver ev;
  auto first = RunWith(b, ev);
  CHECK(Bed::StatusOf(first, "n02") == "busy");
  CHECK(first.outcome != plans::RunState::kDone);
  // The other run converges n02 to what this commit wants (k2), and lets it go.
  b.fake.node("n02").running["kernel"] = "k2";
  b.fake.node("n02").installed["kernel"] = "k2";
  b.fake.node("n02").boot += 1;
  REQUIRE(b.leases.Release("n02", {"20261231-000000-ffff", "other-host", 4242, "bob", 0}).ok());
  b.opts.resume = true;
  auto again = RunWith(b, ev, true, /*begin=*/false);
  CHECK(Bed::StatusOf(again, "n02") == "done");
  CHECK(again.outcome == plans::RunState::kDone);
  CHECK(b.fake.CallsOf("n02").empty());   // never drained, changed or rebooted by this run
  auto steps = b.journal->Steps(b.run_id, "n02");
  REQUIRE(steps.ok());
  bool recorded = false;
  for (const auto& st : *steps)
    recorded |= st.step == "probe" && st.detail.value("converged_elsewhere", false);
  CHECK(recorded);
}

TEST_CASE("rollout: a same-second claim of another run: this one gives way too (a tie holds nobody)") {
  // Review finding: claims were ranked by (time, run id), so on a tie the lower run id held
  // while the higher one, checking first, had held too. Now a tie counts as older: both give
  // way and retry after a random delay.
  Bed b(3, 1);
  b.MakePlan();
  b.fake.other_run = "20991231-000000-ffff";   // a higher id than ours
  b.fake.other_run_drains["n01"] = "n03";
  fakes::RecordingObserver ev;
  auto r = RunWith(b, ev);
  CHECK(r.outcome == plans::RunState::kDone);
  auto calls = b.fake.CallsOf("n01");
  REQUIRE(calls.size() >= 2);
  CHECK(calls[1] == "resume");   // gave way at once, before any change
  CHECK(b.fake.violations().empty());
}

TEST_CASE("rollout: another run's claim on the last slot: this run gives way before it drains") {
  // Integration finding (two journals, one testbed): both runs drained at once and then
  // counted, so the scheduler showed 6 nodes out of 3 until one gave way. A claim is written
  // before the drain and counted by every run: of two runs racing for the last slot, the one
  // that reads second sees the other's claim and never drains.
  Bed b(3, 1);
  b.MakePlan();
  b.fake.other_run_claims["n01"] = "n03";   // the other run read first, drains n03 1 s later
  fakes::RecordingObserver ev;
  auto r = RunWith(b, ev);
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(b.fake.max_unavailable_seen() <= 1);
  auto calls = b.fake.CallsOf("n01");
  REQUIRE_FALSE(calls.empty());
  CHECK(calls[0] == "drain plumb:" + b.run_id + ":drain");   // drained once, after n03 came back
  CHECK(b.fake.Count("n01", "resume") == 1);              // no drain given back: none was taken
  auto claims = b.fake.claims();
  REQUIRE(claims.size() >= 3);
  CHECK(claims[0] == "n01: claim " + b.run_id);
  CHECK(claims[1] == "n03: claim " + b.fake.other_run);
  CHECK(claims[2] == "n01: unclaim");                      // gave way
  bool said = false;
  for (const auto& e : ev.Of(plans::RolloutEvent::Kind::kNote))
    said |= e.node == "n01" && e.message.find("claimed by run " + b.fake.other_run) != std::string::npos;
  CHECK(said);
  for (const char* n : {"n01", "n02"}) CHECK(b.fake.node(n).running["kernel"] == "k2");
  CHECK(b.fake.violations().empty());
}

TEST_CASE("rollout: a claim this run left behind when its process was killed holds no slot") {
  // Integration finding (apply_crash): killed right after claiming n01, the resumed run held
  // n02 back for the claim's whole lifetime, because it counted its own leftover as live.
  Bed b(3, 1);
  b.MakePlan();
  const long long now_s = std::chrono::duration_cast<std::chrono::seconds>(
                              b.clock.Now().time_since_epoch()).count();
  b.fake.node("n03").comment = "rack 7 [plumb-claim:" + b.run_id + "@" + std::to_string(now_s) + "]";
  fakes::RecordingObserver ev;
  auto r = RunWith(b, ev);
  CHECK(r.outcome == plans::RunState::kDone);
  for (const char* n : {"n01", "n02"}) {
    int claims = 0;
    for (const auto& c : b.fake.claims()) claims += c == std::string(n) + ": claim " + b.run_id;
    CHECK_MESSAGE(claims == 1, n);   // claimed once: never deferred for the leftover
  }
  CHECK(b.fake.node("n03").comment == "rack 7");   // replaced, then cleared, the words kept
  CHECK(b.fake.max_unavailable_seen() <= 1);
}

TEST_CASE("rollout: two claims at once, each run seeing the other's: nobody drains, then one goes") {
  Bed b(3, 1);
  b.MakePlan();
  b.fake.other_run_claims["n01"] = "n03";
  b.fake.other_claim_drains = false;   // the other run saw this one's claim and gives way too
  fakes::RecordingObserver ev;
  auto r = RunWith(b, ev);
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(b.fake.max_unavailable_seen() <= 1);
  for (const auto& c : b.fake.CallsOf("n03"))   // the other run never drained n03
    CHECK(c.find(b.fake.other_run) == std::string::npos);
  int n01_claims = 0;
  for (const auto& c : b.fake.claims()) n01_claims += c.rfind("n01: claim", 0) == 0;
  CHECK(n01_claims >= 2);   // gave way once, then claimed again
  for (const char* n : {"n01", "n02", "n03"}) CHECK(b.fake.node(n).running["kernel"] == "k2");
  // Every claim this run wrote is gone again.
  for (const char* n : {"n01", "n02", "n03"}) CHECK(b.fake.node(n).comment.empty());
}

TEST_CASE("rollout: nodes the scheduler has not heard from (a restart) are waited for, not given way to") {
  // Integration finding: right after slurmctld restarted, every node showed NOT_RESPONDING; the
  // budget check counted them all as out and n1 gave way. They are nobody's decision and clear
  // by themselves: wait for them (nothing changes meanwhile), then count again.
  Bed b(3, 1);
  b.MakePlan();
  struct Restart : plans::Observer {
    Bed* b;
    bool done = false;
    void OnEvent(const plans::RolloutEvent& e) override {
      if (!done && e.kind == plans::RolloutEvent::Kind::kStep && e.node == "n01" &&
          e.step == "drain" && e.status == "ok") {
        done = true;
        for (const char* n : {"n02", "n03"})
          b->fake.unresponsive_until[n] = b->clock.Now() + std::chrono::seconds(40);
      }
    }
  } restart;
  restart.b = &b;
  auto r = RunWith(b, restart);
  CHECK(restart.done);
  CHECK(r.outcome == plans::RunState::kDone);
  auto calls = b.fake.CallsOf("n01");
  REQUIRE(calls.size() >= 2);
  CHECK(calls[0] == "drain plumb:" + b.run_id + ":drain");
  CHECK(calls[1] != "resume");                  // did not give way
  CHECK(b.fake.Count("n01", "resume") == 1);    // only the return to service at the end
  CHECK(b.fake.violations().empty());
  for (const char* n : {"n01", "n02", "n03"}) CHECK(b.fake.node(n).running["kernel"] == "k2");
}

TEST_CASE("rollout: nodes that stay unheard from past scheduler_timeout count as out") {
  Bed b(3, 1);
  b.policy.scheduler_timeout_s = 60;
  b.MakePlan();
  struct Dead : plans::Observer {
    Bed* b;
    bool done = false;
    void OnEvent(const plans::RolloutEvent& e) override {
      if (!done && e.kind == plans::RolloutEvent::Kind::kStep && e.node == "n01" &&
          e.step == "drain" && e.status == "ok") {
        done = true;
        b->fake.unresponsive_until["n02"] = b->clock.Now() + std::chrono::seconds(300);
      }
    }
  } dead;
  dead.b = &b;
  auto r = RunWith(b, dead);
  CHECK(dead.done);
  auto calls = b.fake.CallsOf("n01");
  REQUIRE(calls.size() >= 2);
  CHECK(calls[1] == "resume");   // gave way, untouched, after waiting its scheduler_timeout
  CHECK(b.fake.violations().empty());
  // n02 is out as far as anyone can tell: the budget is spent, nothing starts (fail closed),
  // and the halt names the node that holds it; --resume goes on once Slurm hears from it.
  CHECK(r.outcome == plans::RunState::kHalted);
  CHECK(r.halt_reason.find("n02") != std::string::npos);
  CHECK(b.fake.node("n01").running["kernel"] == "k1");   // untouched
  CHECK_FALSE(b.fake.node("n01").drain);
}

TEST_CASE("rollout: a drain the scheduler refuses to give back leaves the node interrupted, never failed") {
  // The node is untouched when it gives way: a refused resume is no failure of the node; it
  // stays drained by this run, and --resume gives it back or goes on.
  Bed b(3, 1);
  b.MakePlan();
  b.fake.other_run_drains["n01"] = "n03";
  b.fake.refuse_resume.insert("n01");
  fakes::RecordingObserver ev;
  auto r = RunWith(b, ev);
  CHECK(Bed::StatusOf(r, "n01") == "interrupted");
  for (const auto& o : r.nodes) CHECK(o.status != plans::NodeState::kFailed);
  CHECK(b.fake.node("n01").running["kernel"] == "k1");   // untouched
  CHECK(b.fake.node("n01").drain);
  CHECK(b.fake.node("n01").reason == "plumb:" + b.run_id + ":drain");   // ours, for --resume
  bool said = false;
  for (const auto& e : ev.Of(plans::RolloutEvent::Kind::kNote))
    said |= e.node == "n01" && e.message.find("could not give its drain back") != std::string::npos;
  CHECK(said);
}

TEST_CASE("rollout: an admin who drains a node mid-change keeps the node and their reason") {
  // Review finding: a failure after an admin re-drained the node overwrote "RMA gpu3" with
  // plumb's failure reason, which a later run would take over and return to service.
  Bed b(1);
  b.MakePlan();
  b.fake.node("n01").apply_fails = true;
  struct Admin : plans::Observer {
    Bed* b;
    void OnEvent(const plans::RolloutEvent& e) override {
      if (e.kind == plans::RolloutEvent::Kind::kStep && e.step.rfind("apply:", 0) == 0 &&
          e.status == "start") {
        b->fake.node("n01").reason = "RMA gpu3";
      }
    }
  } admin;
  admin.b = &b;
  auto r = RunWith(b, admin);
  CHECK(Bed::StatusOf(r, "n01") == "failed");
  CHECK(b.fake.node("n01").reason == "RMA gpu3");
  CHECK(b.fake.node("n01").drain);
}

// An admin drained n01; plumb changes it. Right after its first change, the admin returns it
// to service and a job starts there (the reproduction of issue 31).
struct AdminReturns : plans::Observer {
  Bed* b = nullptr;
  bool done = false;
  void OnEvent(const plans::RolloutEvent& e) override {
    if (!done && e.kind == plans::RolloutEvent::Kind::kStep && e.step.rfind("apply:", 0) == 0 &&
        e.status == "ok") {
      done = true;
      b->fake.node("n01").drain = false;
      b->fake.node("n01").reason.clear();
      b->fake.RunJob("n01", std::chrono::minutes(30));
    }
  }
};

TEST_CASE("rollout: an admin's node returned to service mid-change stops before its next step") {
  Bed b(1);
  b.desired["n01"].desired = nlohmann::json{{"kernel", "k2"}, {"sysctl", "s2"}};   // two changes, then the reboot
  REQUIRE(b.fake.Drain("n01", "RMA gpu3").ok());
  b.MakePlan();
  AdminReturns admin;
  admin.b = &b;
  auto r = RunWith(b, admin);
  CHECK(r.outcome == plans::RunState::kFailed);   // the run ends non-zero
  CHECK(Bed::StatusOf(r, "n01") == "failed");
  CHECK(b.fake.Count("n01", "set") == 1);         // the change in flight, nothing after it
  CHECK(b.fake.Count("n01", "reboot") == 0);
  CHECK(b.fake.violations().empty());
  CHECK_FALSE(b.fake.node("n01").drain);          // the admin's decision: not taken out again
  bool said = false;
  for (const auto& o : r.nodes)
    said |= o.node == "n01" && o.error.find("back in service before") != std::string::npos &&
            o.error.find("RMA gpu3") != std::string::npos && !o.left_drained;
  CHECK(said);
}

TEST_CASE("rollout: plumb's own drain lifted mid-change: drained again, the job waited for") {
  Bed b(1);
  b.desired["n01"].desired = nlohmann::json{{"kernel", "k2"}, {"sysctl", "s2"}};
  b.MakePlan();
  AdminReturns lifted;
  lifted.b = &b;
  auto r = RunWith(b, lifted);
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(b.fake.Count("n01", "drain") == 2);
  CHECK(b.fake.violations().empty());            // nothing changed while the job ran
  CHECK(b.fake.node("n01").running["kernel"] == "k2");
}

TEST_CASE("rollout: a scheduler that cannot be read before a step stops that step") {
  Bed b(1);
  b.desired["n01"].desired = nlohmann::json{{"kernel", "k2"}, {"sysctl", "s2"}};
  b.policy.scheduler_timeout_s = 60;
  b.MakePlan();
  struct Down : plans::Observer {
    Bed* b = nullptr;
    bool done = false;
    void OnEvent(const plans::RolloutEvent& e) override {
      if (!done && e.kind == plans::RolloutEvent::Kind::kStep && e.step.rfind("apply:", 0) == 0 &&
          e.status == "ok") {
        done = true;
        b->fake.scheduler_down_until = b->clock.Now() + std::chrono::hours(2);
      }
    }
  } down;
  down.b = &b;
  auto r = RunWith(b, down);
  CHECK(r.outcome == plans::RunState::kPaused);
  CHECK(Bed::StatusOf(r, "n01") == "interrupted");
  CHECK(b.fake.Count("n01", "set") == 1);
  CHECK(b.fake.Count("n01", "reboot") == 0);
}

TEST_CASE("rollout: a lease lost to another run mid-change: the node is left to it, and said so") {
  // The renewer (every 20 ms here) finds the lease taken while n01 waits for its job.
  Bed b(1);
  b.opts.timing.lease_renew = std::chrono::milliseconds(20);
  b.opts.timing.heartbeat = std::chrono::seconds(1);
  b.MakePlan();
  b.fake.RunJob("n01", std::chrono::minutes(2));
  struct Steal : plans::Observer {
    Bed* b;
    bool done = false;
    void OnEvent(const plans::RolloutEvent& e) override {
      if (!done && e.kind == plans::RolloutEvent::Kind::kWait && e.node == "n01") {
        done = true;
        b->leases.Hold("n01", "20991231-000000-0001", std::chrono::hours(1));
        std::this_thread::sleep_for(std::chrono::milliseconds(300));   // let the renewer see it
      }
    }
  } steal;
  steal.b = &b;
  auto r = RunWith(b, steal);
  CHECK(Bed::StatusOf(r, "n01") == "busy");
  for (const auto& o : r.nodes) {
    CHECK(o.left_drained);
    CHECK(o.error.find("20991231-000000-0001") != std::string::npos);
  }
  CHECK(b.fake.Count("n01", "set ") == 0);
}

TEST_CASE("waivers: a waiver on one member of a map-valued action keeps that member only") {
  // bios: {A: 1, B: 2} differs in both; a waiver covers bios.B.
  modules::Action a;
  a.module = "bios";
  a.id = "bios.attributes";
  a.key = "bios";
  a.pointer = "/bios";
  a.before = {{"A", 0}, {"B", 0}};
  a.after = {{"A", 1}, {"B", 2}};
  a.summary = "set BIOS A=1 B=2";
  inventory::Waiver w;
  w.keys = "bios.B";
  auto split = plans::SplitWaived({a}, [&](const std::string& key) -> const inventory::Waiver* {
    return key == "bios.B" ? &w : nullptr;
  });
  REQUIRE(split.kept.size() == 1);
  CHECK(split.kept[0].after == nlohmann::json{{"A", 1}});
  CHECK(split.kept[0].summary.find("waived, left as they are: B") != std::string::npos);
  REQUIRE(split.waived.size() == 1);
  CHECK(split.waived[0].action.key == "bios.B");
  CHECK(split.waived[0].action.pointer == "/bios/B");
  CHECK(split.waived[0].action.after == 2);
  // Every member waived: the action is waived whole.
  auto all = plans::SplitWaived({a}, [&](const std::string&) { return &w; });
  CHECK(all.kept.empty());
  CHECK(all.waived.size() == 1);
}

namespace {

// Forwards to another drainer, counting the drains that went through it.
class CountingDrainer final : public modules::Drainer {
 public:
  CountingDrainer(modules::Drainer& inner, std::string name) : inner_(inner), name_(std::move(name)) {}
  std::string_view Name() const override { return name_; }
  Result<std::map<std::string, modules::SchedulerNode>> Query(const std::vector<std::string>& n) override {
    return inner_.Query(n);
  }
  Status Drain(const std::string& node, const std::string& reason) override {
    std::lock_guard lock(mu_);
    drained.push_back(node);
    return inner_.Drain(node, reason);
  }
  Status Resume(const std::string& node) override { return inner_.Resume(node); }
  std::vector<std::string> drained;

 private:
  modules::Drainer& inner_;
  std::string name_;
  std::mutex mu_;
};

}  // namespace

TEST_CASE("rollout: each rollout policy drains through its own scheduler") {
  // Review of the design (issue 13): one drainer served every policy, the last policy's
  // scheduler winning. n01 rolls with "slurm-pool", n02 with "k8s-pool".
  Bed b(2);
  inventory::RolloutPolicy k8s = b.policy;
  k8s.name = "k8s-pool";
  k8s.scheduler = inventory::DrainScheduler::kKubernetes;
  b.cluster.rollouts["k8s-pool"] = k8s;
  b.desired["n02"].rollout = "k8s-pool";
  b.MakePlan();
  CountingDrainer slurm(b.fake, "slurm"), kube(b.fake, "kubernetes");
  auto r = RunWith(b, b.observer, false, true, nullptr, [&](plans::RolloutDeps& d) {
    d.drainers = {{"roll", &slurm}, {"k8s-pool", &kube}};
    d.drainer = &slurm;
  });
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(slurm.drained == std::vector<std::string>{"n01"});
  CHECK(kube.drained == std::vector<std::string>{"n02"});
}
