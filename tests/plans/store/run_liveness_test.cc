// What `plumb runs` says of a run the journal calls running, and of its nodes, from a real store.
#include <doctest/doctest.h>

#include <unistd.h>

#include "fakes/temp_store.h"
#include "plans/core/process_identity.h"
#include "plans/plan/plan_json.h"
#include "plans/store/run_liveness.h"

using namespace plumb;

namespace {

plans::RunRecord LivenessRun(const std::string& id, const std::string& host, int64_t pid) {
  plans::RunRecord r;
  r.id = id;
  r.cluster = "pod-a";
  r.plan_digest = "sha256:0";
  r.commit = std::string(40, 'c');
  r.started_at = "2027-01-01T00:00:00.000Z";
  r.owner_host = host;
  r.owner_pid = pid;
  plans::Plan plan;
  plans::Batch b;
  b.nodes = {"n1", "n2", "n3"};
  plan.batches = {b};
  plan.cluster = "pod-a";
  plan.created_at = "2027-01-01T00:00:00.000Z";
  r.plan_json = plans::SealPlanToFile(plan);   // what apply journals
  return r;
}

}  // namespace

TEST_CASE("run liveness: an ended run is its outcome; a running one whose owner is gone says --resume") {
  fakes::TempStore db;
  auto j = std::move(plans::OpenStore(db.store).value());
  plans::RunRecord done = LivenessRun("r-done", plans::HostName(), getpid());
  done.outcome = plans::RunState::kDone;
  CHECK(plans::LivenessOf(done, *j).state == std::string(plans::Name(plans::RunState::kDone)));
  CHECK_FALSE(plans::LivenessOf(done, *j).live);
  // A pid on this host that no process has: the run stopped without recording its end.
  plans::RunRecord gone = LivenessRun("r-gone", plans::HostName(), 0x7ffffff0);
  REQUIRE(j->BeginRun(gone).ok());
  const plans::RunLiveness l = plans::LivenessOf(gone, *j);
  CHECK_FALSE(l.live);
  CHECK(l.state == "running (owner gone: plumb apply --resume r-gone)");
  // Another host: the lock tells, and this run holds none.
  plans::RunRecord away = LivenessRun("r-away", "elsewhere.example", 42);
  REQUIRE(j->BeginRun(away).ok());
  const plans::RunLiveness a = plans::LivenessOf(away, *j);
  CHECK_FALSE(a.live);
  CHECK(a.state.find("no process holds its lock") != std::string::npos);
}

TEST_CASE("run liveness: the plan's nodes without a row, and where a stopped run's node ended") {
  fakes::TempStore db;
  auto j = std::move(plans::OpenStore(db.store).value());
  plans::RunRecord r = LivenessRun("r1", "elsewhere.example", 42);
  REQUIRE(j->BeginRun(r).ok());
  plans::NodeRecord n1;
  n1.run = "r1";
  n1.node = "n1";
  n1.last_step = "drain";
  CHECK(plans::NodesWithoutRow(r, {n1}) == std::vector<std::string>{"n2", "n3"});
  CHECK(plans::StoppedNodeNote(r, n1, /*live=*/true, *j).empty());
  CHECK(plans::StoppedNodeNote(r, n1, false, *j) ==
        "its process stopped after drain without recording where the node ended; --resume re-checks it");
  plans::StepRecord s;
  s.run = "r1";
  s.node = "n1";
  s.step = "reboot";
  s.started_at = "2027-01-01T00:01:00.000Z";
  REQUIRE(j->StepIntent(s).ok());
  CHECK(plans::StoppedNodeNote(r, n1, false, *j) ==
        "its process stopped during reboot (its intent is recorded, not how it ended); --resume re-checks it");
  n1.status = plans::NodeState::kDone;
  CHECK(plans::StoppedNodeNote(r, n1, false, *j).empty());
  r.plan_json = "not json";
  CHECK(plans::NodesWithoutRow(r, {n1}).empty());
}
