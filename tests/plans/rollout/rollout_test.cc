// The apply state machine against FakeCluster: ordered calls (drain before change), the budget,
// admin drains, canary, max_failures, stale nodes, the window, Ctrl-C, and resume after a crash
// at every journaled point.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "fakes/fake_cluster.h"
#include "fakes/rollout_bed.h"
#include "modules/transport/cancel_signal.h"
#include "plans/plan/planner.h"
#include "plans/rollout/rollout.h"

using namespace plumb;
using fakes::FakeCluster;
using modules::Disruption;

namespace {

// The shared bed (fakes/rollout_bed.h) with this file's knobs: a canary, a failure budget, the
// engine's timing, a lock that expires, crash hooks, the health step's modules.
struct RolloutWorld : fakes::RolloutBed {
  std::function<bool()> lock_expiring;
  bool use_leases = false;
  std::vector<const modules::Module*> all_modules;   ///< for the health step
  bool with_desired = false;                         ///< give the engine each node's desired state
  plans::RolloutTiming timing;

  explicit RolloutWorld(int n, int max_unavailable = 2, int canary = 1, int max_failures = 0)
      : RolloutBed("rollout", n, max_unavailable, canary) {
    policy.max_failures = max_failures;
    policy.health = {"nvidia-smi -L"};
  }

  plans::RolloutResult Apply(bool resume = false, plans::CrashHook crash = {}) {
    if (plan.batches.empty()) MakePlan();
    if (!resume) REQUIRE(journal->BeginRun(Record()).ok());
    plans::RolloutOptions o;
    o.run_id = run_id;
    o.resume = resume;
    o.cluster = &cluster;
    o.timing = timing;
    o.timing.reboot_grace = std::chrono::seconds(30);
    o.owner_host = "ctl";
    o.owner_pid = 1;
    plans::RolloutDeps d = Deps(use_leases);
    d.all_modules = all_modules;
    if (with_desired)
      for (const auto& [n, nd] : desired) o.desired[n] = *nd.desired;
    d.lock_expiring = lock_expiring;
    d.crash = std::move(crash);
    return plans::RunRollout(plan, o, d);
  }
};

}  // namespace

TEST_CASE("rollout: one node drains, waits for its job, changes, reboots, verifies, returns") {
  // Given one node running a job for 10 minutes, when the kernel upgrade is applied,
  RolloutWorld w(1);
  w.fake.RunJob("n01", std::chrono::minutes(10));
  auto start = w.clock.Now();
  auto r = w.Apply();
  // then the change waits for the job, happens drained, and the node comes back in service.
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(w.fake.CallsOf("n01") ==
        std::vector<std::string>{"drain plumb:20270101-000000-abcd:drain", "set kernel k2",
                                 "reboot", "health nvidia-smi -L", "marker", "resume"});
  CHECK(w.fake.violations().empty());
  CHECK(w.clock.Now() - start >= std::chrono::minutes(10));
  CHECK(w.fake.node("n01").running["kernel"] == "k2");
  CHECK(w.fake.node("n01").boot == 2);
  CHECK_FALSE(w.fake.node("n01").drain);
  auto marker = nlohmann::json::parse(w.fake.node("n01").marker);
  CHECK(marker["commit"] == std::string(40, 'c'));
  CHECK(marker["run"] == w.run_id);
  // Every step has an intent and an outcome in the journal, in order.
  auto steps = w.journal->Steps(w.run_id, "n01");
  REQUIRE(steps.ok());
  std::vector<std::string> names;
  for (const auto& s : *steps) {
    names.push_back(s.step);
    CHECK_MESSAGE(s.outcome != plans::StepState::kNone, s.step);
  }
  CHECK(names == std::vector<std::string>{"probe", "claim", "drain", "wait-drained", "apply:kernel.install",
                                          "reboot", "wait-boot", "verify", "health:1", "marker",
                                          "resume"});
  auto run = w.journal->GetRun(w.run_id);
  REQUIRE(run.ok());
  CHECK((*run)->outcome == plans::RunState::kDone);
}

TEST_CASE("rollout: while it waits for its own drain, the run pushes the work off (Kubernetes evictions)") {
  SUBCASE("its drain: evicted at the first poll, no 5-hour wait") {
    RolloutWorld w(1);
    w.policy.drain_timeout_s = 600;
    w.fake.RunJob("n01", std::chrono::hours(5));
    w.fake.node("n01").evictable = true;
    auto start = w.clock.Now();
    auto r = w.Apply();
    CHECK(r.outcome == plans::RunState::kDone);
    CHECK(w.fake.node("n01").evictions >= 1);
    CHECK(w.clock.Now() - start < std::chrono::minutes(5));
    CHECK(w.fake.violations().empty());
  }
  SUBCASE("nothing left to push: no eviction at all") {
    RolloutWorld w(1);
    auto r = w.Apply();
    CHECK(r.outcome == plans::RunState::kDone);
    CHECK(w.fake.node("n01").evictions == 0);
  }
  SUBCASE("an admin's drain: theirs to empty, never evicted by plumb") {
    RolloutWorld w(1);
    REQUIRE(w.fake.Drain("n01", "bad fan").ok());
    w.fake.RunJob("n01", std::chrono::minutes(2));
    w.fake.node("n01").evictable = true;
    auto start = w.clock.Now();
    (void)w.Apply();
    CHECK(w.fake.node("n01").evictions == 0);
    CHECK(w.clock.Now() - start >= std::chrono::minutes(2));
    CHECK(w.fake.node("n01").drain);   // and it stays the admin's
  }
}

TEST_CASE("rollout: never more than max_unavailable out, counting nodes already drained") {
  // Given 8 nodes, max_unavailable 3, and one node drained by an admin before the rollout,
  RolloutWorld w(8, 3);
  REQUIRE(w.fake.Drain("n08", "bad fan").ok());
  for (int i = 1; i <= 7; ++i) w.fake.RunJob(fmt::format("n{:02}", i), std::chrono::seconds(30 * i));
  auto r = w.Apply();
  // then every node is done, and at most 3 were ever out at once, the admin's one included.
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(w.fake.max_unavailable_seen() <= 3);
  CHECK(w.fake.max_unavailable_seen() >= 2);
  CHECK(w.fake.violations().empty());
  for (int i = 1; i <= 8; ++i) CHECK(w.fake.node(fmt::format("n{:02}", i)).running["kernel"] == "k2");
}

TEST_CASE("rollout: a node an admin drains mid-batch takes its slot: never more out than allowed") {
  // 6 nodes, max_unavailable 2, no canary: batches of two, planned with every node up. Before
  // the apply an admin drains n06, so the first batch starts one node at a time. When n01 comes
  // back, the admin drains n05 too: n02 must wait (2 out), not take n01's slot.
  RolloutWorld w(6, 2, /*canary=*/0);
  w.MakePlan();
  REQUIRE(w.plan.batches.size() == 3);
  REQUIRE(w.plan.batches[0].nodes == std::vector<std::string>{"n01", "n02"});
  REQUIRE(w.fake.Drain("n06", "admin: n06").ok());
  w.fake.drain_on_resume["n01"] = "n05";
  auto r = w.Apply();
  CHECK(w.fake.max_unavailable_seen() <= 2);
  CHECK(w.StatusOf(r, "n01") == "done");
  CHECK(w.fake.Count("n02", "drain plumb") == 0);   // never taken out while n05+n06 were
  CHECK(r.outcome == plans::RunState::kHalted);
  CHECK(r.halt_reason.find("max_unavailable 2 reached") != std::string::npos);
}

TEST_CASE("rollout: an admin-drained node is changed but stays drained, reason untouched") {
  RolloutWorld w(2, 2);
  REQUIRE(w.fake.Drain("n02", "RMA gpu3").ok());
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(w.fake.node("n02").running["kernel"] == "k2");
  CHECK(w.fake.node("n02").drain);
  CHECK(w.fake.node("n02").reason == "RMA gpu3");
  CHECK(w.fake.Count("n02", "resume") == 0);
  CHECK(w.fake.Count("n02", "drain plumb") == 0);
  CHECK_FALSE(w.fake.node("n01").drain);
  auto nodes = w.journal->Nodes(w.run_id);
  REQUIRE(nodes.ok());
  bool seen = false;
  for (const auto& n : *nodes)
    if (n.node == "n02") {
      seen = true;
      CHECK(n.admin_drained);
      CHECK(n.admin_reason == "RMA gpu3");
    }
  CHECK(seen);
}

TEST_CASE("rollout: a node an admin set down with a reason is changed but not put back") {
  RolloutWorld w(2, 2);
  w.fake.node("n02").admin_down = true;
  w.fake.node("n02").reason = "PSU swap";
  w.MakePlan();
  REQUIRE(w.plan.FindNode("n02") != nullptr);
  CHECK(w.plan.FindNode("n02")->admin_drained);   // the plan says so too
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(w.fake.node("n02").running["kernel"] == "k2");
  CHECK(w.fake.Count("n02", "drain plumb") == 0);   // the admin's reason is not overwritten
  CHECK(w.fake.Count("n02", "resume") == 0);
  CHECK(w.fake.node("n02").reason == "PSU swap");
  CHECK(w.fake.Count("n01", "resume") == 1);
}

TEST_CASE("rollout: a drain that took effect but reported an error leaves the node saying why") {
  RolloutWorld w(1, 1, /*canary=*/0);
  w.fake.node("n01").drain_errs = true;
  auto r = w.Apply();
  CHECK(w.StatusOf(r, "n01") == "failed");
  CHECK(w.fake.node("n01").drain);
  // Not the bare "...:drain" reason of a node in progress: the failure, for the operator.
  CHECK(w.fake.node("n01").reason.rfind("plumb:" + w.run_id + ":failed:drain: ", 0) == 0);
  bool left = false;
  for (const auto& o : r.nodes) left |= o.node == "n01" && o.left_drained;
  CHECK(left);
}

TEST_CASE("rollout: a canary failure stops the rollout and leaves the canary drained with why") {
  RolloutWorld w(4, 2, /*canary=*/1, /*max_failures=*/5);
  w.MakePlan();
  REQUIRE(w.plan.batches.size() >= 2);
  const std::string canary = w.plan.batches[0].nodes[0];
  w.fake.node(canary).apply_fails = true;
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kHalted);
  CHECK(r.halt_reason.find("canary") != std::string::npos);
  CHECK(w.StatusOf(r, canary) == "failed");
  CHECK(w.fake.node(canary).drain);
  CHECK(w.fake.node(canary).reason.rfind("plumb:" + w.run_id + ":failed:apply:kernel.install: ", 0) == 0);
  for (const auto& n : w.plan.batches[1].nodes) {
    CHECK(w.StatusOf(r, n) == "not-started");
    CHECK(w.fake.CallsOf(n).empty());
  }
  // --resume of the halted run (as apply suggests) does not roll the fleet after a failed
  // canary, even with failures still under max_failures.
  auto again = w.Apply(/*resume=*/true);
  CHECK(again.outcome == plans::RunState::kHalted);
  CHECK(again.halt_reason.find("canary") != std::string::npos);
  for (const auto& n : w.plan.batches[1].nodes) CHECK(w.fake.CallsOf(n).empty());
}

TEST_CASE("rollout: past max_failures no new node starts") {
  // Given 6 nodes in two batches of 3, max_failures 1, and two nodes of the first batch failing
  // their health gate,
  RolloutWorld w(6, 3, /*canary=*/0, /*max_failures=*/1);
  w.fake.node("n01").health_exit = 3;
  w.fake.node("n02").health_exit = 3;
  auto r = w.Apply();
  // then the budget is spent and the second batch never starts.
  CHECK(r.outcome == plans::RunState::kHalted);
  CHECK(r.halt_reason.find("max_failures") != std::string::npos);
  CHECK(w.StatusOf(r, "n03") == "done");
  for (const char* n : {"n01", "n02"}) {
    CHECK(w.StatusOf(r, n) == "failed");
    CHECK(w.fake.node(n).drain);
    CHECK(w.fake.node(n).reason.find(":failed:health:1: health gate  nvidia-smi -L  exited 3") !=
          std::string::npos);
  }
  for (const char* n : {"n04", "n05", "n06"}) {
    CHECK(w.StatusOf(r, n) == "not-started");
    CHECK(w.fake.CallsOf(n).empty());
  }
}

TEST_CASE("rollout: a node whose facts changed since the plan is skipped as stale, untouched") {
  RolloutWorld w(2, 2);
  w.MakePlan();
  w.fake.node("n02").running["sysctl"] = "changed-by-hand";
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kIncomplete);
  CHECK(w.StatusOf(r, "n02") == "stale");
  CHECK(w.fake.CallsOf("n02").empty());
  CHECK(w.StatusOf(r, "n01") == "done");
}

TEST_CASE("rollout: outside the maintenance window nothing starts; resume inside it finishes") {
  // The fake clock starts Friday 2027-01-01 00:00 UTC; the window opens 22:00 for 2h.
  RolloutWorld w(2, 2);
  w.policy.window_cron = "0 22 * * *";
  w.policy.window_duration_s = 7200;
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kPaused);
  CHECK(r.next_window == "2027-01-01T22:00:00.000Z");
  CHECK(w.fake.calls().empty());
  w.clock.Advance(std::chrono::hours(22) + std::chrono::minutes(5));
  auto r2 = w.Apply(/*resume=*/true);
  CHECK(r2.outcome == plans::RunState::kDone);
  CHECK(w.fake.node("n02").running["kernel"] == "k2");
}

TEST_CASE("rollout: faults leave the node drained with the reason") {
  SUBCASE("a reboot that never returns") {
    RolloutWorld w(1);
    w.fake.node("n01").never_returns = true;
    auto r = w.Apply();
    CHECK(r.outcome == plans::RunState::kHalted);   // it was the canary
    CHECK(r.nodes[0].step == "wait-boot");
    CHECK(r.nodes[0].error.find("no new boot id") != std::string::npos);
  }
  SUBCASE("a drain that times out") {
    RolloutWorld w(1);
    w.policy.drain_timeout_s = 60;
    w.fake.RunJob("n01", std::chrono::hours(5));
    auto r = w.Apply();
    CHECK(r.nodes[0].status == plans::NodeState::kFailed);
    CHECK(r.nodes[0].step == "wait-drained");
    CHECK(w.fake.Count("n01", "set") == 0);
    CHECK(w.fake.node("n01").reason.find(":failed:wait-drained: drain timeout") != std::string::npos);
  }
  SUBCASE("a reboot command that does nothing") {
    RolloutWorld w(1);
    w.fake.node("n01").ignore_reboot = true;
    auto r = w.Apply();
    CHECK(r.nodes[0].status == plans::NodeState::kFailed);
    CHECK(r.nodes[0].error.find("boot id unchanged") != std::string::npos);
  }
}

TEST_CASE("rollout: Ctrl-C abandons the wait safely; resume finishes the job") {
  RolloutWorld w(1);
  w.fake.RunJob("n01", std::chrono::minutes(30));
  std::thread stopper([&] {
    while (w.fake.Count("n01", "drain") == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    w.stop = true;
  });
  auto r = w.Apply();
  stopper.join();
  CHECK(r.outcome == plans::RunState::kInterrupted);
  CHECK(w.fake.node("n01").drain);
  CHECK(w.fake.node("n01").reason == "plumb:" + w.run_id + ":drain");
  CHECK(w.fake.Count("n01", "set") == 0);
  w.stop = false;
  auto r2 = w.Apply(true);
  CHECK(r2.outcome == plans::RunState::kDone);
  CHECK(w.fake.Count("n01", "drain") == 1);
  CHECK(w.fake.Count("n01", "set kernel") == 1);
  CHECK_FALSE(w.fake.node("n01").drain);
}

TEST_CASE("rollout: a cluster lock about to run out stops the run before its next step, resumable") {
  // Given a run whose lock stops being renewed once n01 is drained (a store that does not
  // answer, a process stopped and continued),
  RolloutWorld w(2);
  w.fake.RunJob("n01", std::chrono::minutes(30));
  std::atomic<bool> expiring{false};
  w.lock_expiring = [&] { return expiring.load(); };
  std::thread watcher([&] {
    while (w.fake.Count("n01", "drain") == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    expiring = true;
  });
  auto r = w.Apply();
  watcher.join();
  // then it ends interrupted: nothing installed, no new node started, n01 left as it was.
  CHECK(r.outcome == plans::RunState::kInterrupted);
  CHECK(w.fake.Count("n01", "set") == 0);
  CHECK(w.fake.Count("n02", "drain") == 0);
  CHECK(w.fake.node("n01").drain);
  // and whoever holds the lock next (--resume) finishes it, nothing twice.
  expiring = false;
  auto r2 = w.Apply(true);
  CHECK(r2.outcome == plans::RunState::kDone);
  CHECK(w.fake.Count("n01", "drain") == 1);
  CHECK(w.fake.Count("n01", "set kernel") == 1);
  CHECK(w.fake.Count("n02", "set kernel") == 1);
}

TEST_CASE("rollout: a crash at any journaled point, then resume: converges, nothing twice") {
  const char* kinds[] = {"probe", "claim", "drain", "wait-drained", "apply", "reboot",
                         "wait-boot", "verify", "health", "marker", "resume"};
  int points = 0;
  for (const char* kind : kinds) {
    for (const char* phase : {"intent", "outcome"}) {
      for (int nth : {1, 2}) {
        const std::string point = fmt::format("{}.{}", kind, phase);
        CAPTURE(point);
        CAPTURE(nth);
        RolloutWorld w(3, 1, /*canary=*/1);
        w.fake.RunJob("n02", std::chrono::minutes(3));
        std::atomic<int> seen{0};
        auto r = w.Apply(false, [&](const std::string& p) { return p == point && ++seen == nth; });
        REQUIRE(r.outcome == plans::RunState::kCrashed);
        ++points;
        auto r2 = w.Apply(true);
        CHECK(r2.outcome == plans::RunState::kDone);
        for (const char* n : {"n01", "n02", "n03"}) {
          CAPTURE(n);
          CHECK(w.fake.node(n).running["kernel"] == "k2");
          CHECK(w.fake.Count(n, "set kernel") == 1);
          CHECK(w.fake.Count(n, "reboot") == 1);
          CHECK_FALSE(w.fake.node(n).drain);
          CHECK(!w.fake.node(n).marker.empty());
          CHECK(w.fake.node(n).comment.empty());   // no claim left behind
        }
        CHECK(w.fake.violations().empty());
        CHECK(w.fake.max_unavailable_seen() <= 1);
      }
    }
  }
  CHECK(points == 44);
}

TEST_CASE("rollout: facts a module cannot read when resume re-checks a step stop the node; nothing is redone") {
  // A crash after the install, before its outcome was journaled: resume looks before redoing.
  // If what it sees does not read (Module::DiffFacts), that is no "not done yet".
  RolloutWorld w(1);
  auto r = w.Apply(false, [](const std::string& p) { return p == "apply.outcome"; });
  REQUIRE(r.outcome == plans::RunState::kCrashed);
  REQUIRE(w.fake.Count("n01", "set kernel") == 1);
  w.fake.node("n01").malformed_module = "kernel";
  auto r2 = w.Apply(true);
  CHECK(r2.outcome != plans::RunState::kDone);
  REQUIRE(r2.nodes.size() == 1);
  CHECK(r2.nodes[0].status == plans::NodeState::kFailed);
  CHECK(r2.nodes[0].error.find("the kernel facts do not read") != std::string::npos);
  CHECK(w.fake.Count("n01", "set kernel") == 1);
  CHECK(w.fake.Count("n01", "reboot") == 0);
  CHECK(w.fake.node("n01").drain);   // left out of service, with why
}

TEST_CASE("rollout: a crash after a BMC power cycle: resume waits for the boot, no second cycle") {
  // ssh answers everything but the boot-id read at reboot time, so the reboot goes through the
  // BMC with no boot id to compare against; plumb dies right after it.
  for (const char* point : {"reboot.intent", "reboot.outcome"}) {
    CAPTURE(point);
    RolloutWorld w(1, 1, /*canary=*/0);
    w.fake.node("n01").boot_id_unreadable = 1;
    std::atomic<int> seen{0};
    const std::string at = point;
    auto r = w.Apply(false, [&](const std::string& p) { return p == at && ++seen == 1; });
    REQUIRE(r.outcome == plans::RunState::kCrashed);
    w.clock.Advance(std::chrono::seconds(10));   // the operator resumes once it is back up
    auto r2 = w.Apply(true);
    CHECK(r2.outcome == plans::RunState::kDone);
    CHECK(w.fake.node("n01").running["kernel"] == "k2");
    // One reboot in all: the BMC's, or (crashed before it was sent) one over ssh on resume.
    CHECK(w.fake.Count("n01", "bmc-reset") + w.fake.Count("n01", "reboot") == 1);
  }
}

TEST_CASE("rollout: a lost journal: the node plumb drained is adopted and finished") {
  // A crash after the install, and the journal is gone: the operator resumes the run id with
  // the plan; Slurm's reason names the run, so the node is adopted and re-checked.
  RolloutWorld w(1);
  auto r = w.Apply(false, [](const std::string& p) { return p == "apply.outcome"; });
  REQUIRE(r.outcome == plans::RunState::kCrashed);
  REQUIRE(w.fake.node("n01").reason == "plumb:" + w.run_id + ":drain");
  w.journal.reset();
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(w.journal_path + ext);
  w.journal = std::move(plans::OpenSqliteJournal(w.journal_path).value());
  plans::RunRecord rec;
  rec.id = w.run_id;
  rec.cluster = "t";
  rec.plan_digest = "x";
  rec.plan_json = "{}";
  rec.commit = w.plan.source.commit;
  rec.started_at = plans::Rfc3339(w.clock.Now());
  REQUIRE(w.journal->BeginRun(rec).ok());
  plans::RolloutOptions o;
  o.run_id = w.run_id;
  o.resume = true;
  o.adopt = {"n01"};
  plans::RolloutDeps d;
  d.journal = w.journal.get();
  d.drainer = &w.fake;
  d.prober = &w.fake;
  d.transport = &w.fake;
  d.modules = [&w](std::string_view n) { return w.Find(n); };
  d.clock = &w.clock;
  auto r2 = plans::RunRollout(w.plan, o, d);
  CHECK(r2.outcome == plans::RunState::kDone);
  CHECK(w.fake.Count("n01", "set kernel") == 1);
  CHECK(w.fake.Count("n01", "reboot") == 1);
  CHECK_FALSE(w.fake.node("n01").drain);
}

TEST_CASE("rollout: drain reasons carry the run, and are safe to pass to scontrol") {
  CHECK(plans::DrainReason("r1", "drain") == "plumb:r1:drain");
  CHECK(plans::DrainReason("r1", "failed:apply:x: it's \"bad\"\n$(x)") ==
        "plumb:r1:failed:apply:x: it s  bad   (x)");
  CHECK(plans::RunOfReason("plumb:r1:failed:verify: x") == "r1");
  CHECK(plans::RunOfReason("plumb:r1:drain [root@2027-01-01T00:00:00]") == "r1");
  CHECK(plans::RunOfReason("RMA gpu3") == "");
  CHECK(plans::DrainReason("r", std::string(500, 'x')).size() == 200);
  auto id = plans::NewRunId(*plans::ParseRfc3339("2027-01-01T02:03:04.000Z"));
  CHECK(id.rfind("20270101-020304-", 0) == 0);
  CHECK(id.find(':') == std::string::npos);
}

namespace {

// A health module for the engine's health step: its script goes to the fake node, which answers
// it like any unknown command (no sections), so when it runs it fails the node.
class HeavyCheck final : public modules::Module {
 public:
  HeavyCheck() {
    info_.name = "heavy";
    info_.owns = {"/health/heavy"};
    info_.kind = modules::ModuleInfo::Kind::kHealth;
    info_.on_demand = true;
  }
  const modules::ModuleInfo& Info() const override { return info_; }
  std::string CheckScript(const nlohmann::json&) const override { return "plumb_run gpu stress-every-gpu"; }
  std::vector<modules::Action> Diff(const nlohmann::json&, const modules::Facts&) const override { return {}; }

 private:
  modules::ModuleInfo info_;
};

int HealthScriptsRun(RolloutWorld& w, const std::string& node) {
  int n = 0;
  for (const std::string& c : w.fake.CallsOf(node)) n += c.find("stress-every-gpu") != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("rollout: on-demand health checks run only on a node out of service") {
  HeavyCheck heavy;
  SUBCASE("a change that needs no drain: the node stays in service, the GPUs are not loaded") {
    RolloutWorld w(1);
    w.fake.node("n01").running["kernel"] = "k2";
    w.fake.node("n01").installed["kernel"] = "k2";
    w.fake.node("n01").running["sysctl"] = "s0";
    w.fake.node("n01").installed["sysctl"] = "s0";
    for (auto& [n, nd] : w.desired) nd.desired.Mut()["health"] = {{"heavy", {{"level", 3}}}};
    w.all_modules = {&heavy};
    w.with_desired = true;
    auto r = w.Apply();
    CHECK(r.outcome == plans::RunState::kDone);
    CHECK(HealthScriptsRun(w, "n01") == 0);
    auto steps = w.journal->Steps(w.run_id, "n01");
    REQUIRE(steps.ok());
    for (const auto& s : *steps) CHECK(s.step != "health:checks");
  }
  SUBCASE("a drained change: the checks run, and a failure keeps the node out with the reason") {
    RolloutWorld w(1);
    for (auto& [n, nd] : w.desired) nd.desired.Mut()["health"] = {{"heavy", {{"level", 3}}}};
    w.all_modules = {&heavy};
    w.with_desired = true;
    auto r = w.Apply();
    CHECK(r.outcome == plans::RunState::kHalted);   // the canary failed
    CHECK(HealthScriptsRun(w, "n01") == 1);
    CHECK(w.fake.node("n01").drain);
    CHECK(w.fake.node("n01").reason.find(":failed:health:checks: health: ") != std::string::npos);
  }
}

namespace {

// A gathered (not on-demand) health module whose one check fails while `failing` is set: its
// facts (a constant the fake node reports) never move, so the plan's facts digest holds and
// only the verdict changes.
class FlakyHealth final : public modules::Module {
 public:
  FlakyHealth() {
    info_.name = "flaky";
    info_.owns = {"/health/flaky"};
    info_.kind = modules::ModuleInfo::Kind::kHealth;
  }
  const modules::ModuleInfo& Info() const override { return info_; }
  std::vector<modules::Action> Diff(const nlohmann::json&, const modules::Facts&) const override { return {}; }
  std::vector<modules::CheckResult> Checks(const nlohmann::json&, const modules::Facts&) const override {
    return {{.module = "flaky", .id = "flaky.gpu3.ecc", .name = "GPU uncorrected ECC errors", .subject = "GPU 3",
             .status = failing ? modules::CheckStatus::kFail : modules::CheckStatus::kPass, .measured = failing ? 2 : 0,
             .threshold = {{"max", 0}}, .message = failing ? "2 > 0" : "0"}};
  }
  bool failing = false;

 private:
  modules::ModuleInfo info_;
};

}  // namespace

TEST_CASE("rollout: a node that fails a health check by the time apply reaches it, under unhealthy: skip") {
  // Planned healthy (the plan would have skipped it otherwise), failing now: not the node the
  // plan saw. skip leaves it as it is, untouched, reported; change changes it and judges after.
  FlakyHealth flaky;
  auto world = [&](inventory::RolloutPolicy::Unhealthy mode) {
    auto w = std::make_unique<RolloutWorld>(1);
    w->policy.unhealthy = mode;
    w->fake.node("n01").running["flaky"] = "read";
    for (auto& [n, nd] : w->desired) nd.desired.Mut()["health"] = {{"flaky", {{"max", 0}}}};
    w->all_modules = {&flaky};
    w->with_desired = true;
    flaky.failing = false;
    w->MakePlan();
    REQUIRE(w->plan.nodes.size() == 1);
    CHECK_FALSE(w->plan.nodes[0].skipped_unhealthy);
    flaky.failing = true;
    return w;
  };
  SUBCASE("skip: untouched, stale, the check named") {
    auto w = world(inventory::RolloutPolicy::Unhealthy::kSkip);
    auto r = w->Apply();
    CHECK(w->StatusOf(r, "n01") == "stale");
    CHECK(r.outcome == plans::RunState::kIncomplete);
    CHECK(w->fake.Count("n01", "drain") == 0);
    CHECK(w->fake.Count("n01", "set kernel") == 0);
    CHECK(w->fake.node("n01").running["kernel"] == "k1");
    REQUIRE(r.nodes.size() == 1);
    CHECK(r.nodes[0].error.find("unhealthy since the plan, left as it is (rollout 'roll': unhealthy: skip): "
                                "flaky: GPU uncorrected ECC errors on GPU 3: 2 (max 0): 2 > 0") != std::string::npos);
  }
  SUBCASE("change: changed, then judged") {
    auto w = world(inventory::RolloutPolicy::Unhealthy::kChange);
    auto r = w->Apply();
    CHECK(w->StatusOf(r, "n01") != "stale");
    CHECK(w->fake.Count("n01", "set kernel") == 1);
  }
  SUBCASE("skip, and healthy still: applied as planned") {
    auto w = world(inventory::RolloutPolicy::Unhealthy::kSkip);
    flaky.failing = false;
    auto r = w->Apply();
    CHECK(w->StatusOf(r, "n01") != "stale");
    CHECK(w->fake.node("n01").running["kernel"] == "k2");
  }
}

namespace {

// Stands for the firmware module: the BMC takes the change as a task. The first Apply is stopped
// by Ctrl-C while the task runs; an Apply given the task back ("in_flight") follows it to its
// end, which makes the change.
class TaskModule final : public modules::Module {
 public:
  TaskModule(const modules::Module& inner, std::atomic<bool>& stop) : inner_(inner), stop_(stop) {}
  const modules::ModuleInfo& Info() const override { return inner_.Info(); }
  std::vector<modules::Action> Diff(const nlohmann::json& desired,
                                    const modules::Facts& facts) const override {
    return inner_.Diff(desired, facts);
  }
  modules::ApplyOutcome Apply(modules::NodeContext& ctx, const modules::Action& a) const override {
    params.push_back(a.params);
    if (!a.params.contains("in_flight")) {
      ctx.in_flight({{"task", "/redfish/v1/TaskService/Tasks/9"}, {"monitor", ""}});
      transport::WaitProgress p;
      p.what = "task /redfish/v1/TaskService/Tasks/9";
      p.state = "Running";
      p.percent = 42;
      ctx.progress(p);
      stop_ = true;   // Ctrl-C while it waits
      return modules::ApplyOutcome::Failed(Diagnostic::Error(
          transport::kCancelledCode, "stopped waiting for task /redfish/v1/TaskService/Tasks/9"));
    }
    return inner_.Apply(ctx, a);
  }
  mutable std::vector<nlohmann::json> params;

 private:
  const modules::Module& inner_;
  std::atomic<bool>& stop_;
};

}  // namespace

TEST_CASE("rollout: Ctrl-C during a BMC task: the step is interrupted with its task, resume follows it") {
  RolloutWorld w(1);
  TaskModule flash(w.kernel, w.stop);
  w.kernel_module = &flash;
  auto r = w.Apply();
  // The node is interrupted, not failed, and the journal says what is in flight.
  CHECK(r.outcome == plans::RunState::kInterrupted);
  REQUIRE(r.nodes.size() == 1);
  CHECK(r.nodes[0].status == plans::NodeState::kInterrupted);
  auto steps = w.journal->Steps(w.run_id, "n01");
  REQUIRE(steps.ok());
  const plans::StepRecord* apply = nullptr;
  const plans::StepRecord* task = nullptr;
  for (const auto& st : *steps) {
    if (st.step == "apply:kernel.install") apply = &st;
    if (st.step == "task:kernel.install") task = &st;
  }
  REQUIRE(apply);
  REQUIRE(task);
  CHECK(apply->outcome == plans::StepState::kInterrupted);
  CHECK(apply->detail["in_flight"]["task"] == "/redfish/v1/TaskService/Tasks/9");
  CHECK(task->outcome == plans::StepState::kInterrupted);
  CHECK(task->detail["task"] == "/redfish/v1/TaskService/Tasks/9");
  // The wait was the node's heartbeat.
  bool heard = false;
  for (const auto& e : w.observer.events)
    heard = heard || (e.kind == plans::RolloutEvent::Kind::kWait && e.node == "n01" &&
                      e.message.find("Running 42%") != std::string::npos);
  CHECK(heard);
  CHECK(w.fake.Count("n01", "set kernel") == 0);

  // Resume hands the task back to the module instead of starting another update.
  w.stop = false;
  auto r2 = w.Apply(true);
  CHECK(r2.outcome == plans::RunState::kDone);
  REQUIRE(flash.params.size() == 2);
  CHECK(flash.params[1]["in_flight"]["task"] == "/redfish/v1/TaskService/Tasks/9");
  CHECK(w.fake.Count("n01", "set kernel") == 1);
  auto after = w.journal->Steps(w.run_id, "n01");
  REQUIRE(after.ok());
  for (const auto& st : *after)
    if (st.step == "task:kernel.install") CHECK(st.outcome == plans::StepState::kOk);
}
