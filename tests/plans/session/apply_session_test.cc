// plumb apply's session (plans/session/apply_session): what is planned, asked, locked, recorded
// and run for each mode, against a real store in a temporary file and a fake outside world.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "fakes/temp_journal.h"
#include "modules/drain/none_drainer.h"
#include "plans/core/clock.h"
#include "plans/plan/plan_json.h"
#include "plans/report/apply_summary.h"
#include "plans/report/report_fixture.h"
#include "plans/session/apply_session.h"

using namespace plumb;

namespace {

constexpr const char* kSessionCommit = "cccccccccccccccccccccccccccccccccccccccc";

// The world outside the session: the report tests' 4-node cluster, planned now; every call
// recorded, and what the session saw while the rollout "ran".
struct FakeWorld final : plans::ApplyWorld {
  explicit FakeWorld(plans::Journal& j) : journal(j) {
    testing::ReportWorld w;
    plans::Plan p = w.plan;
    p.unreadable.clear();
    p.complete = true;
    plans::SealPlan(p);
    planned.plan = p;
    planned.loaded.cluster = w.cluster;
    planned.loaded.desired = w.desired;
    plans::CommitTrust t;
    t.commit = kSessionCommit;
    t.info.author = "Ann <ann@example.org>";
    t.info.committer = "Bob <bob@example.org>";
    t.note = "not signed; the policy does not require it";
    planned.trust = t;
  }

  Result<plans::Plan> ReadPlanFile(const std::string& path) override {
    calls.push_back("read " + path);
    return plan_file;
  }
  Result<plans::PlannedNow> PlanNow(const std::string& repo, const std::string& ref,
                                    const std::string& limit) override {
    calls.push_back("plan " + repo + " " + ref + " " + limit);
    return planned;
  }
  inventory::LoadedCluster Load(const std::string& repo, const std::string& ref) override {
    calls.push_back("load " + repo + " " + ref);
    return planned.loaded;
  }
  Result<std::string> ResolveCommit(const std::string&, const std::string& ref) override {
    return ref;
  }
  Result<plans::CommitTrust> CheckTrust(const std::string&, const std::string& commit,
                                        const std::string&) override {
    trust_checked.push_back(commit);
    if (refuse_trust) return *refuse_trust;
    return *planned.trust;
  }
  plans::Schedulers SchedulersOf(const inventory::Cluster&) override {
    ++scheduler_reads;
    return {};
  }
  std::unique_ptr<modules::Drainer> NoScheduler() override {
    return std::make_unique<modules::NoneDrainer>();
  }
  plans::Answer Ask() override {
    ++asked;
    return answer;
  }
  Status Write(const std::string& path, const std::string&) override {
    calls.push_back("write " + path);
    return OkStatus();
  }
  void Err(const std::string& line) override { err.push_back(line); }
  void Out(const std::string& text) override { out += text; }
  std::chrono::system_clock::time_point Now() override { return std::chrono::system_clock::now(); }
  plans::RolloutResult Run(const plans::Plan& plan, const plans::RolloutOptions& opts,
                           plans::RolloutDeps& deps, const inventory::LoadedCluster&,
                           const std::string& repo) override {
    ++runs;
    ran_nodes = plan.nodes.size();
    seen = opts;
    run_repo = repo;
    auto lock = journal.GetLock(plan.cluster);
    REQUIRE(lock.ok());
    if (lock->has_value()) lock_holder = (*lock)->run;
    auto rec = journal.GetRun(opts.run_id);
    REQUIRE(rec.ok());
    record = *rec;
    had_drainer = deps.drainer != nullptr;
    expiring = deps.lock_expiring ? deps.lock_expiring() : true;
    result.run = opts.run_id;
    return result;
  }

  bool HasErr(const std::string& part) const {
    return std::any_of(err.begin(), err.end(),
                       [&](const std::string& l) { return l.find(part) != std::string::npos; });
  }

  plans::Journal& journal;
  plans::PlannedNow planned;
  Result<plans::Plan> plan_file = Diagnostic::Error("apply.plan", "no plan file here");
  plans::Answer answer = plans::Answer::kYes;
  plans::RolloutResult result;
  std::vector<std::string> calls, err;
  std::string out;
  int asked = 0, runs = 0;
  size_t ran_nodes = 0;
  plans::RolloutOptions seen;
  std::string run_repo, lock_holder;
  std::optional<plans::RunRecord> record;
  bool had_drainer = false, expiring = true;
  std::optional<Diagnostic> refuse_trust;   ///< CheckTrust's verdict when set
  std::vector<std::string> trust_checked;   ///< the commits CheckTrust was asked about
  int scheduler_reads = 0;
};

struct SessionFixture : fakes::TempJournal {
  SessionFixture() : TempJournal("plumb-session"), world(*j) {
    req.ref = "main";
    req.limit = "gpu00[1-2]";
    req.host = "ctl";
    req.pid = 4242;
    req.user = "ops";
    req.journal_name = "journal.db";
    req.who.operator_user = "ops";
  }
  Outcome Run() { return plans::RunApplySession(req, *j, world, &stop); }
  bool Locked() {
    auto lock = j->GetLock("pod-a");
    REQUIRE(lock.ok());
    return lock->has_value();
  }
  size_t Runs() {
    auto runs = j->ListRuns(100);
    REQUIRE(runs.ok());
    return runs->size();
  }
  // A finished run of the cluster in the journal, `failed` its nodes left failed.
  void AddRun(const std::string& id, plans::RunState outcome, std::vector<std::string> failed) {
    plans::RunRecord r;
    r.id = id;
    r.cluster = "pod-a";
    r.plan_json = plans::PlanToJson(world.planned.plan).dump();
    r.commit = std::string(40, 'd');
    r.repo = "/srv/pod-a";
    r.started_at = "2027-01-01T00:00:00.000Z";
    r.owner_host = "ctl";
    r.owner_pid = 1;
    r.outcome = outcome;
    REQUIRE(j->BeginRun(r).ok());
    for (const char* n : {"gpu001", "gpu002", "gpu003"}) {
      plans::NodeRecord nr;
      nr.run = id;
      nr.node = n;
      nr.status = std::count(failed.begin(), failed.end(), n) ? plans::NodeState::kFailed
                                                              : plans::NodeState::kDone;
      REQUIRE(j->PutNode(nr).ok());
    }
  }

  FakeWorld world;
  plans::ApplyRequest req;
  std::atomic<bool> stop{false};
};

}  // namespace

TEST_CASE("apply session: a plan made now is shown and asked: without a terminal nothing is locked or run") {
  SessionFixture f;
  f.world.answer = plans::Answer::kNoTerminal;
  CHECK(f.Run() == Outcome::kError);
  CHECK(f.world.calls == std::vector<std::string>{"plan . main gpu00[1-2]"});
  CHECK(f.world.out.find("gpu001") != std::string::npos);   // the plan text, as plan prints it
  CHECK(f.world.asked == 1);
  CHECK(f.world.HasErr("refusing to apply without confirmation: stdin is not a terminal"));
  CHECK(f.world.runs == 0);
  CHECK_FALSE(f.Locked());
  CHECK(f.Runs() == 0);
}

TEST_CASE("apply session: an operator's no applies nothing, and --format json shows no plan text") {
  SessionFixture f;
  f.world.answer = plans::Answer::kNo;
  f.req.json = true;
  CHECK(f.Run() == Outcome::kError);
  CHECK(f.world.out.empty());
  CHECK(f.world.HasErr("plumb apply: not applied"));
  CHECK(f.world.runs == 0);
  CHECK(f.Runs() == 0);
}

TEST_CASE("apply session: approved, the run starts under the cluster lock with its record, then the summary") {
  SessionFixture f;
  f.req.auto_approve = true;
  f.req.lock_ttl = std::chrono::seconds(600);
  f.world.result.outcome = plans::RunState::kPaused;
  CHECK(f.Run() == Outcome::kPaused);
  CHECK(f.world.asked == 0);   // --auto-approve
  REQUIRE(f.world.runs == 1);
  const std::string id = f.world.seen.run_id;
  CHECK_FALSE(id.empty());
  CHECK(f.world.lock_holder == id);        // locked while it ran...
  CHECK_FALSE(f.Locked());                 // ...and released after
  CHECK_FALSE(f.world.expiring);           // a fresh lock is not about to run out
  CHECK(f.world.had_drainer);
  REQUIRE(f.world.record.has_value());
  CHECK(f.world.record->commit == kSessionCommit);
  CHECK(f.world.record->who.author == "Ann <ann@example.org>");
  CHECK(f.world.record->who.committer == "Bob <bob@example.org>");
  CHECK(f.world.record->who.signer == "not signed; the policy does not require it");
  CHECK(f.world.record->owner_host == "ctl");
  CHECK(f.world.seen.commit == kSessionCommit);
  CHECK(f.world.seen.desired.size() == 4);   // every node's desired state, for verify
  CHECK(f.world.seen.scope.at("roll").size() == 4);
  CHECK_FALSE(f.world.seen.resume);
  CHECK(f.world.run_repo == ".");
  plans::RolloutResult res = f.world.result;
  CHECK(f.world.out.find(plans::report::ApplySummaryText(res, id, "journal.db")) !=
        std::string::npos);
}

TEST_CASE("apply session: a run's outcome is its exit code row") {
  using S = plans::RunState;
  auto of = [](S s) {
    plans::RolloutResult r;
    r.outcome = s;
    return plans::OutcomeOfRun(r);
  };
  CHECK(of(S::kDone) == Outcome::kOk);
  CHECK(of(S::kInterrupted) == Outcome::kInterrupted);
  CHECK(of(S::kPaused) == Outcome::kPaused);
  CHECK(of(S::kIncomplete) == Outcome::kPaused);
  CHECK(of(S::kFailed) == Outcome::kRunFailed);
  CHECK(of(S::kHalted) == Outcome::kRunFailed);
  CHECK(of(S::kCrashed) == Outcome::kRunFailed);
}

TEST_CASE("apply session: nothing to apply is said, and no run starts") {
  SessionFixture f;
  f.world.planned.plan.nodes.clear();
  plans::SealPlan(f.world.planned.plan);
  CHECK(f.Run() == Outcome::kOk);
  CHECK(f.world.out.find("nothing to apply: every node is in sync") != std::string::npos);
  CHECK(f.world.asked == 0);
  CHECK(f.world.runs == 0);
  CHECK(f.Runs() == 0);

  SessionFixture g;   // some nodes unreadable: partial, never "in sync"
  g.world.planned.plan.nodes.clear();
  g.world.planned.plan.unreadable = {{"gpu004", "timeout"}};
  g.world.planned.plan.complete = false;
  plans::SealPlan(g.world.planned.plan);
  CHECK(g.Run() == Outcome::kPartial);
  CHECK(g.world.out.find("nothing to apply on the nodes read; 1 node(s) could not be read") !=
        std::string::npos);
}

TEST_CASE("apply session: --resume of a finished run says so and touches nothing") {
  SessionFixture f;
  f.AddRun("r1", plans::RunState::kDone, {});
  f.req.resume = true;
  f.req.resume_run = "r1";
  CHECK(f.Run() == Outcome::kOk);
  CHECK(f.world.out == "run r1 is already done\n");
  CHECK(f.world.calls.empty());
  CHECK(f.world.runs == 0);
}

TEST_CASE("apply session: --retry-failed plans exactly the failed nodes, at the run's commit and repo") {
  SessionFixture f;
  f.AddRun("r1", plans::RunState::kFailed, {"gpu002", "gpu003"});
  f.req.retry_failed = "r1";
  f.req.limit.clear();
  f.req.auto_approve = true;
  CHECK(f.Run() == Outcome::kOk);
  REQUIRE_FALSE(f.world.calls.empty());
  CHECK(f.world.calls.front() == "plan /srv/pod-a " + std::string(40, 'd') + " gpu[002-003]");
  CHECK(f.world.HasErr("plumb apply: retrying the node(s) run r1 left failed: gpu[002-003]"));
  CHECK(f.world.runs == 1);
  CHECK(f.world.run_repo == "/srv/pod-a");

  SessionFixture g;   // --ref and --repo given: planned there
  g.AddRun("r1", plans::RunState::kFailed, {"gpu002"});
  g.req.retry_failed = "r1";
  g.req.ref_given = g.req.repo_given = true;
  g.req.repo = "/other";
  g.world.answer = plans::Answer::kNo;
  CHECK(g.Run() == Outcome::kError);
  CHECK(g.world.calls.front() == "plan /other main gpu002");
}

TEST_CASE("apply session: --retry-failed of a run that left no node failed has nothing to retry") {
  SessionFixture f;
  f.AddRun("r1", plans::RunState::kDone, {});
  f.req.retry_failed = "r1";
  CHECK(f.Run() == Outcome::kOk);
  CHECK(f.world.out == "run r1 left no node failed: nothing to retry\n");
  CHECK(f.world.calls.empty());
}

TEST_CASE("apply session: a plan file whose digest does not match is refused before the repo is read") {
  SessionFixture f;
  plans::Plan p = f.world.planned.plan;
  p.nodes.pop_back();   // changed after it was sealed
  f.world.plan_file = p;
  f.req.plan_file = "plan.json";
  CHECK(f.Run() == Outcome::kError);
  CHECK(f.world.calls == std::vector<std::string>{"read plan.json"});
  REQUIRE_FALSE(f.world.err.empty());
  CHECK(f.world.err.front().rfind("plumb apply: ", 0) == 0);
  CHECK(f.world.runs == 0);
}

// The test world's plan as `plumb plan --out` would save it: every node to change in one
// batch, sealed.
plans::Plan SavedPlan(const plans::Plan& planned) {
  plans::Plan p = planned;
  plans::Batch b;
  b.rollout = "roll";   // the policy the world's nodes name
  inventory::RolloutPolicy& roll = p.rollouts["roll"];
  roll.name = "roll";
  roll.canary = 0;
  roll.max_unavailable_count = 8;
  for (const plans::NodePlan& n : p.nodes)
    if (!n.skipped_unhealthy) b.nodes.push_back(n.node);
  b.budget = static_cast<int>(b.nodes.size());
  p.batches = {b};
  plans::SealPlan(p);
  return p;
}

TEST_CASE("apply session: a saved plan is loaded at its commit, judged, checked, then run under the lock") {
  SessionFixture f;
  f.world.plan_file = SavedPlan(f.world.planned.plan);
  f.world.planned.loaded.cluster.rollouts["roll"] = f.world.plan_file->rollouts.at("roll");
  f.req.plan_file = "plan.json";
  f.req.limit.clear();
  f.req.auto_approve = true;
  CHECK(f.Run() == Outcome::kOk);
  const std::string commit = f.world.planned.plan.source.commit;
  REQUIRE(f.world.calls.size() >= 2);
  CHECK(f.world.calls[0] == "read plan.json");
  CHECK(f.world.calls[1] == "load " + f.world.planned.plan.source.repo + " " + commit);
  CHECK(f.world.trust_checked == std::vector<std::string>{f.world.planned.loaded.cluster.source.commit});
  CHECK(f.world.scheduler_reads == 1);
  CHECK(f.world.asked == 0);   // --auto-approve
  CHECK(f.world.runs == 1);
  CHECK(f.world.ran_nodes == f.world.planned.plan.nodes.size());
  CHECK(f.world.lock_holder == f.world.seen.run_id);   // the run held the cluster lock
  CHECK_FALSE(f.Locked());                             // and let it go when it ended
}

TEST_CASE("apply session: a saved plan at an untrusted commit fails before any scheduler read or lock") {
  SessionFixture f;
  f.world.plan_file = SavedPlan(f.world.planned.plan);
  f.req.plan_file = "plan.json";
  f.req.limit.clear();
  f.req.auto_approve = true;
  f.world.refuse_trust = Diagnostic::Error("trust.unsigned", "commit is not signed by a trusted key");
  CHECK(f.Run() == Outcome::kError);
  CHECK(f.world.trust_checked.size() == 1);
  CHECK(f.world.scheduler_reads == 0);
  CHECK(f.world.runs == 0);
  CHECK(f.Runs() == 0);   // no run record either
  CHECK_FALSE(f.Locked());
  CHECK(f.world.HasErr("commit is not signed by a trusted key"));
}

TEST_CASE("apply session: --force-unlock releases a dead remote owner's expired lock, and nothing else") {
  SessionFixture f;
  const auto past = std::chrono::system_clock::now() - std::chrono::hours(1);
  plans::LockInfo held{"pod-a", "r9", "elsewhere", 99, plans::Rfc3339(past),
                       plans::Rfc3339(past + std::chrono::minutes(10)), ""};
  plans::LockInfo by;
  REQUIRE(*f.j->AcquireLock(held, plans::Rfc3339(past), &by));
  f.req.force_unlock = "r9";
  CHECK(f.Run() == Outcome::kOk);
  CHECK(f.world.out == "released the lock of cluster pod-a held by run r9 (host elsewhere, pid 99)\n");
  CHECK_FALSE(f.Locked());
  CHECK(f.world.calls.empty());

  f.world.out.clear();
  CHECK(f.Run() == Outcome::kError);   // no lock left to release
  CHECK(f.world.HasErr("plumb apply: "));
  CHECK(f.world.HasErr("run r9 holds no lock"));
}

TEST_CASE("apply session: a store outage is said with what the run does about it") {
  plans::StoreEvent e;
  e.store = "postgresql://db/plumb";
  e.why = "connection refused";
  e.window = std::chrono::seconds(120);
  e.kind = plans::StoreEvent::Kind::kUnreachable;
  const std::string down = plans::StoreEventLine(e, "r1");
  CHECK(down.find("the store postgresql://db/plumb does not answer (connection refused)") !=
        std::string::npos);
  CHECK(down.find("waiting up to 120s") != std::string::npos);
  CHECK(down.find("plumb apply --resume r1") != std::string::npos);
  e.kind = plans::StoreEvent::Kind::kGaveUp;
  e.down_for = std::chrono::seconds(121);
  CHECK(plans::StoreEventLine(e, "r1").find("has not answered for 121s") != std::string::npos);
  e.kind = plans::StoreEvent::Kind::kBack;
  CHECK(plans::StoreEventLine(e, "r1") ==
        "plumb apply: the store postgresql://db/plumb answers again (after 121s)");
}

TEST_CASE("apply flags: each flag acts in its mode or is refused, never silently ignored") {
  using S = std::set<std::string>;
  CHECK(plans::ApplyFlagConflicts(S{"--limit", "--ref", "--auto-approve"}, true).empty());
  CHECK(plans::ApplyFlagConflicts(S{"--force-unlock", "--dead-owner", "--store"}, false).empty());
  CHECK(plans::ApplyFlagConflicts(S{"--force-unlock", "--limit"}, true) ==
        std::vector<std::string>{
            "--limit does nothing with --force-unlock (it only releases a lock; it takes "
            "--journal and --dead-owner)",
            "a plan file does nothing with --force-unlock"});
  CHECK(plans::ApplyFlagConflicts(S{"--dead-owner"}, false) ==
        std::vector<std::string>{"--dead-owner confirms a --force-unlock; give both"});
  const auto resume = plans::ApplyFlagConflicts(S{"--resume", "--retry-failed", "--limit"}, false);
  REQUIRE(resume.size() == 2);
  CHECK(resume[0] == "--resume continues a run, --retry-failed starts a new one: give one of them");
  CHECK(resume[1].rfind("--limit does nothing with --resume", 0) == 0);
  CHECK(plans::ApplyFlagConflicts(S{"--reboot-grace"}, false).size() == 1);
  CHECK(plans::ApplyFlagConflicts(S{"--reboot-grace", "--resume"}, false).empty());
  CHECK(plans::ApplyFlagConflicts(S{"--retry-failed"}, true) ==
        std::vector<std::string>{"--retry-failed plans the failed nodes anew; it takes no plan file"});
}

TEST_CASE("apply session: a plan made now carries the run's and the load's notes, sealed; an error stops it") {
  testing::ReportWorld w;
  plans::PlannedNow now;
  now.plan = w.plan;
  now.plan.digest.clear();
  now.loaded.diags.Add(Diagnostic::Warning("repo.note", "a load warning"));
  Diagnostics run;
  run.Add(Diagnostic::Warning("gather.note", "a read warning"));
  auto sealed = plans::SealPlannedNow(now, run);
  REQUIRE(sealed.ok());
  const auto& items = sealed->plan.diags.items();
  REQUIRE(items.size() >= 2);
  CHECK(items[items.size() - 2].code == "gather.note");
  CHECK(items.back().code == "repo.note");
  CHECK_FALSE(sealed->plan.digest.empty());
  CHECK(plans::VerifyPlanDigest(sealed->plan).ok());

  Diagnostics broken;
  broken.Add(Diagnostic::Error("gather.failed", "no node answered"));
  auto failed = plans::SealPlannedNow(now, broken);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == "gather.failed");
}
