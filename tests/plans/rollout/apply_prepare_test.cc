// Getting an apply ready (plans/apply_prepare): which run --resume continues, each rollout
// policy's own scheduler, the nodes --retry-failed takes again, the commit a saved plan is
// applied at, and a start that happens whole or leaves nothing behind.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "fakes/fake_clock.h"
#include "fakes/fake_cluster.h"
#include "fakes/temp_journal.h"
#include "plans/plan/plan_json.h"
#include "plans/report/report_fixture.h"
#include "plans/rollout/apply_prepare.h"
#include "plans/store/apply_lock.h"

using namespace plumb;

namespace {

struct PrepareDb : fakes::TempJournal {
  PrepareDb() : TempJournal("plumb-prepare") {}
  // The run holding cluster "pod"'s lock, "" when none does.
  std::string LockHolder() {
    auto lock = j->GetLock("pod");
    REQUIRE(lock.ok());
    return lock->has_value() ? (*lock)->run : "";
  }
  bool HasRun(const std::string& id) {
    auto rec = j->GetRun(id);
    REQUIRE(rec.ok());
    return rec->has_value();
  }
};

// A valid plan (the report tests' world) whose nodes are `node_rollouts`, each with the
// world's sysctl change.
plans::Plan OnePlan(std::vector<std::pair<std::string, std::string>> node_rollouts) {
  testing::ReportWorld w;
  plans::Plan p = w.plan;
  p.cluster = "pod";
  p.source.commit = std::string(40, 'a');
  const plans::NodePlan model = p.nodes.front();
  p.nodes.clear();
  for (auto& [n, r] : node_rollouts) {
    plans::NodePlan np = model;
    np.node = n;
    np.rollout = r;
    p.nodes.push_back(np);
  }
  plans::SealPlan(p);
  return p;
}

plans::RunRecord Run(const std::string& id, const std::string& outcome, const plans::Plan& plan) {
  plans::RunRecord r;
  r.id = id;
  r.cluster = "pod";
  r.plan_json = plans::PlanToJson(plan).dump();
  r.commit = std::string(40, 'c');
  r.started_at = "2027-01-01T00:00:00.000Z";
  r.owner_host = "h";
  r.owner_pid = 1;
  r.outcome = *plans::ParseRunState(outcome);
  return r;
}

// A drainer that forwards to a FakeCluster it does not own, so one fake can stand behind the
// scheduler a maker returns; `name` says which scheduler kind it was made for.
class Forward final : public modules::Drainer {
 public:
  Forward(modules::Drainer& to, std::string name) : to_(to), name_(std::move(name)) {}
  std::string_view Name() const override { return name_; }
  Result<std::map<std::string, modules::SchedulerNode>> Query(
      const std::vector<std::string>& nodes) override {
    return to_.Query(nodes);
  }
  Status Drain(const std::string& n, const std::string& reason) override { return to_.Drain(n, reason); }
  Status Resume(const std::string& n) override { return to_.Resume(n); }

 private:
  modules::Drainer& to_;
  std::string name_;
};

// Two pools: "train" drained through Slurm (fake `slurm`), "infer" through Kubernetes (fake
// `k8s`); each fake knows only its own nodes.
struct TwoPools {
  fakes::FakeClock clock;
  fakes::FakeCluster slurm{clock}, k8s{clock};
  inventory::Cluster cluster;
  int made = 0;
  TwoPools() {
    slurm.Add("t1", {});
    slurm.Add("t2", {});
    k8s.Add("i1", {});
    inventory::RolloutPolicy train, infer;
    train.name = "train";
    train.scheduler = inventory::DrainScheduler::kSlurm;
    infer.name = "infer";
    infer.scheduler = inventory::DrainScheduler::kKubernetes;
    cluster.rollouts = {{"train", train}, {"infer", infer}};
  }
  plans::Schedulers Make() {
    return plans::SchedulersFor(cluster, [&](inventory::DrainScheduler k) -> std::unique_ptr<modules::Drainer> {
      ++made;
      if (k == inventory::DrainScheduler::kKubernetes) return std::make_unique<Forward>(k8s, "kubernetes");
      return std::make_unique<Forward>(slurm, "slurm");
    });
  }
};

}  // namespace

TEST_CASE("apply prepare: --resume without a run continues the newest unfinished one, with its plan") {
  PrepareDb db;
  const plans::Plan plan = OnePlan({{"n1", "default"}});
  REQUIRE(db.j->BeginRun(Run("20270101-000000-0001", "running", plan)).ok());
  REQUIRE(db.j->BeginRun(Run("20270101-000000-0002", "running", plan)).ok());
  REQUIRE(db.j->EndRun("20270101-000000-0002", plans::RunState::kDone, "2027-01-01T00:01:00.000Z", "").ok());
  auto c = plans::ChooseRunToResume(*db.j, "", false, "j.db");
  INFO((c.ok() ? std::string() : c.error().ToString()));
  REQUIRE(c.ok());
  CHECK(c->run_id == "20270101-000000-0001");
  CHECK(c->kind == plans::ResumeChoice::Kind::kContinue);
  CHECK(c->run_commit == std::string(40, 'c'));
  REQUIRE(c->plan.nodes.size() == 1);
  CHECK(c->plan.nodes[0].node == "n1");
}

TEST_CASE("apply prepare: --resume refuses what it cannot continue, saying what to do instead") {
  PrepareDb db;
  const plans::Plan plan = OnePlan({{"n1", "default"}});
  SUBCASE("nothing unfinished") {
    REQUIRE(db.j->BeginRun(Run("r1", "running", plan)).ok());
    REQUIRE(db.j->EndRun("r1", plans::RunState::kDone, "2027-01-01T00:01:00.000Z", "").ok());
    auto c = plans::ChooseRunToResume(*db.j, "", false, "j.db");
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().message.find("nothing to resume") != std::string::npos);
  }
  SUBCASE("a finished run named: already done, nothing to do") {
    REQUIRE(db.j->BeginRun(Run("r1", "running", plan)).ok());
    REQUIRE(db.j->EndRun("r1", plans::RunState::kDone, "2027-01-01T00:01:00.000Z", "").ok());
    auto c = plans::ChooseRunToResume(*db.j, "r1", false, "j.db");
    REQUIRE(c.ok());
    CHECK(c->kind == plans::ResumeChoice::Kind::kAlreadyDone);
  }
  SUBCASE("a plan file for a run the journal has would not be read: refused") {
    REQUIRE(db.j->BeginRun(Run("r1", "running", plan)).ok());
    auto c = plans::ChooseRunToResume(*db.j, "r1", true, "j.db");
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().message.find("would not be read") != std::string::npos);
  }
  SUBCASE("a run the journal lost needs its plan file") {
    auto c = plans::ChooseRunToResume(*db.j, "lost-run", false, "j.db");
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().message.find("give its plan file too") != std::string::npos);
    auto with = plans::ChooseRunToResume(*db.j, "lost-run", true, "j.db");
    REQUIRE(with.ok());
    CHECK(with->kind == plans::ResumeChoice::Kind::kRecoverLost);
  }
}

TEST_CASE("apply prepare: each rollout policy gets its own scheduler, each kind made once") {
  // The bug this guards: one drainer served every policy (the last policy's scheduler won), so
  // a Kubernetes pool was drained through Slurm.
  TwoPools w;
  inventory::RolloutPolicy more = w.cluster.rollouts["train"];
  more.name = "train-2";
  w.cluster.rollouts["train-2"] = more;
  plans::Schedulers s = w.Make();
  CHECK(w.made == 2);
  REQUIRE(s.For("train") != nullptr);
  REQUIRE(s.For("infer") != nullptr);
  CHECK(s.For("train")->Name() == "slurm");
  CHECK(s.For("infer")->Name() == "kubernetes");
  CHECK(s.For("train-2") == s.For("train"));
  CHECK(s.For("nope") == nullptr);
  // The view is every scheduler's nodes.
  plans::SchedulerView v = plans::ReadSchedulers(s);
  CHECK(v.ok());
  CHECK(v.nodes.size() == 3);
  CHECK(v.nodes.count("i1") == 1);
}

TEST_CASE("apply prepare: a scheduler that cannot be read makes the view unusable, not partial") {
  TwoPools w;
  w.k8s.scheduler_down_until = w.clock.Now() + std::chrono::hours(1);
  plans::Schedulers s = w.Make();
  plans::SchedulerView v = plans::ReadSchedulers(s);
  CHECK_FALSE(v.ok());
  // --limit refuses to form batches over it.
  plans::Plan plan = OnePlan({{"t1", "train"}});
  auto narrowed = plans::NarrowPlanToLimit(plan, w.cluster, {}, v, "t1", nullptr);
  REQUIRE_FALSE(narrowed.ok());
  CHECK(narrowed.error().message.find("cannot form the batches") != std::string::npos);
}

TEST_CASE("apply prepare: --retry-failed of another runner's run takes the nodes every scheduler names failed") {
  TwoPools w;
  REQUIRE(w.slurm.Drain("t1", "plumb:r9:failed:apply:kernel.install: exit 1").ok());
  REQUIRE(w.slurm.Drain("t2", "plumb:r9:drain").ok());              // in progress, not failed
  REQUIRE(w.k8s.Drain("i1", "plumb:r9:failed:verify: mismatch").ok());
  plans::Schedulers s = w.Make();
  auto failed = plans::FailedNodesInSchedulers(s, "r9");
  REQUIRE(failed.ok());
  CHECK(*failed == std::vector<std::string>{"i1", "t1"});
  auto other = plans::FailedNodesInSchedulers(s, "r8");
  REQUIRE(other.ok());
  CHECK(other->empty());
}

TEST_CASE("apply prepare: the commit a saved plan is applied at") {
  plans::Plan plan = OnePlan({{"n1", "default"}});
  int resolved = 0;
  auto resolve = [&](const std::string& ref) -> Result<std::string> {
    ++resolved;
    if (ref == "main") return std::string(40, 'b');
    return Diagnostic::Error("git.ref", "no such ref " + ref);
  };
  // A resumed run keeps its own commit, whatever else is said.
  auto a = plans::CommitForSavedPlan(plan, std::string(40, 'c'), "main", resolve);
  REQUIRE(a.ok());
  CHECK(a->commit == std::string(40, 'c'));
  CHECK(resolved == 0);
  // No --ref: the plan's.
  auto b = plans::CommitForSavedPlan(plan, "", "", resolve);
  REQUIRE(b.ok());
  CHECK(b->commit == plan.source.commit);
  CHECK(b->note.empty());
  // --ref main after the merge: what it names now, with a note that it is not the plan's.
  auto c = plans::CommitForSavedPlan(plan, "", "main", resolve);
  REQUIRE(c.ok());
  CHECK(c->commit == std::string(40, 'b'));
  CHECK(c->note.find("the plan was made at aaaaaaaaaaaa") != std::string::npos);
  auto d = plans::CommitForSavedPlan(plan, "", "nope", resolve);
  CHECK_FALSE(d.ok());
}

TEST_CASE("apply prepare: a run starts whole - lock, record, recovery - or gives the lock back") {
  PrepareDb db;
  TwoPools w;
  plans::Plan plan = OnePlan({{"t1", "train"}, {"t2", "train"}, {"i1", "infer"}});
  plans::RunStart start;
  start.lock = {"pod", "r9", "host-a", getpid(), "2027-01-01T00:00:00.000Z",
                "2027-01-01T00:10:00.000Z", ""};
  start.record = Run("r9", "running", plan);

  SUBCASE("a lost run: recovered through each policy's own scheduler") {
    REQUIRE(w.slurm.Drain("t1", "plumb:r9:apply:kernel.install").ok());
    REQUIRE(w.slurm.Drain("t2", "plumb:r9:failed:verify: mismatch").ok());
    REQUIRE(w.k8s.Drain("i1", "plumb:r9:drain").ok());
    start.recover_lost = true;
    plans::Schedulers s = w.Make();
    auto r = plans::StartRun(*db.j, plan, start, s, "2027-01-01T00:00:00.000Z");
    REQUIRE(r.ok());
    std::vector<std::string> adopted = r->adopt;
    std::sort(adopted.begin(), adopted.end());
    CHECK(adopted == std::vector<std::string>{"i1", "t1"});
    auto nodes = db.j->Nodes("r9");
    REQUIRE(nodes.ok());
    REQUIRE(nodes->size() == 1);
    CHECK(nodes->front().node == "t2");
    CHECK(nodes->front().status == plans::NodeState::kFailed);
    CHECK(db.LockHolder() == "r9");
  }
  SUBCASE("a lost run whose scheduler cannot be read: refused, lock given back, no record") {
    w.k8s.scheduler_down_until = w.clock.Now() + std::chrono::hours(1);
    start.recover_lost = true;
    plans::Schedulers s = w.Make();
    auto r = plans::StartRun(*db.j, plan, start, s, "2027-01-01T00:00:00.000Z");
    REQUIRE_FALSE(r.ok());
    CHECK(db.LockHolder().empty());
    CHECK_FALSE(db.HasRun("r9"));
  }
  SUBCASE("another live run holds the cluster: refused before any record") {
    plans::LockInfo other = start.lock;
    other.run = "r1";
    other.owner_host = "host-b";
    std::vector<std::string> notes;
    REQUIRE(plans::TakeClusterLock(*db.j, other, "2027-01-01T00:00:00.000Z", &notes).ok());
    plans::Schedulers s = w.Make();
    auto r = plans::StartRun(*db.j, plan, start, s, "2027-01-01T00:00:01.000Z");
    REQUIRE_FALSE(r.ok());
    CHECK_FALSE(db.HasRun("r9"));
    CHECK(db.LockHolder() == "r1");   // the holder's lock untouched
  }
}
