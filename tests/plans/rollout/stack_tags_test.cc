// The stack the scheduler shows on a node (modules/drain/stack_tag.h) through an apply: none
// while the node changes, the commit's once it is verified and marked, before it returns; the
// plan's in-sync nodes shown as the run starts; refusals, partial runs and crashes.
#include <doctest/doctest.h>

#include <atomic>

#include <fmt/format.h>

#include "fakes/fake_cluster.h"
#include "fakes/rollout_bed.h"
#include "plans/rollout/rollout.h"

using namespace plumb;

namespace {

const modules::StackTag kOld{"gpu-2025q3", "aaaaaaaaaaaa"};
const modules::StackTag kNew{"gpu-2025q4", "cccccccccccc"};   // the bed's commit is 40 'c'

// The bed (fakes/rollout_bed.h) with every node on stack gpu-2025q4 at the commit, each
// showing the old stack to begin with.
struct StackWorld : fakes::RolloutBed {
  std::string stack_name = kNew.stack;
  explicit StackWorld(int n, int max_unavailable = 2)
      : RolloutBed("stack", n, max_unavailable, /*canary=*/0) {
    for (const auto& node : cluster.nodes) fake.node(node.name).tag = kOld;
  }

  plans::RolloutResult Apply(bool resume = false, plans::CrashHook crash = {}) {
    if (plan.batches.empty() && plan.in_sync.empty()) MakePlan();
    if (!resume) REQUIRE(journal->BeginRun(Record()).ok());
    plans::RolloutOptions o;
    o.run_id = run_id;
    o.resume = resume;
    o.cluster = &cluster;
    o.owner_host = "ctl";
    o.owner_pid = 1;
    o.timing.reboot_grace = std::chrono::seconds(30);
    for (const auto& node : cluster.nodes) {
      o.stacks[node.name] = stack_name;
      o.scope["roll"].push_back(node.name);
    }
    plans::RolloutDeps d = Deps(false);
    d.crash = std::move(crash);
    return plans::RunRollout(plan, o, d);
  }

  std::vector<std::string> LogOf(const std::string& node) const {
    std::vector<std::string> out;
    for (const auto& l : fake.stack_log())
      if (l.rfind(node + ": ", 0) == 0) out.push_back(l.substr(node.size() + 2));
    return out;
  }
  std::vector<std::string> Steps(const std::string& node) {
    auto steps = journal->Steps(run_id, node);
    REQUIRE(steps.ok());
    std::vector<std::string> names;
    for (const auto& s : *steps) names.push_back(s.step);
    return names;
  }
};

}  // namespace

TEST_CASE("stack tags: none while the node changes, the commit's before it returns") {
  StackWorld w(1);
  w.fake.RunJob("n01", std::chrono::minutes(5));
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  // The fake counts a change made while the node shows a stack as a violation.
  CHECK(w.fake.violations().empty());
  CHECK(w.LogOf("n01") == std::vector<std::string>{"stack (none)", "stack gpu-2025q4@cccccccccccc",
                                                   "resume showing gpu-2025q4@cccccccccccc"});
  CHECK(w.fake.node("n01").tag == kNew);
  CHECK(w.Steps("n01") ==
        std::vector<std::string>{"probe", "claim", "drain", "wait-drained", "stack:clear",
                                 "apply:kernel.install", "reboot", "wait-boot", "verify",
                                 "marker", "stack:set", "resume"});
}

TEST_CASE("stack tags: an admin's node is tagged like the others and stays drained") {
  StackWorld w(2);
  REQUIRE(w.fake.Drain("n02", "RMA gpu3").ok());
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(w.LogOf("n02") == std::vector<std::string>{"stack (none)", "stack gpu-2025q4@cccccccccccc"});
  CHECK(w.fake.node("n02").drain);
  CHECK(w.fake.node("n02").reason == "RMA gpu3");
  CHECK(w.fake.violations().empty());
}

TEST_CASE("stack tags: in-sync nodes show the commit's stack as the run starts; out ones are left") {
  StackWorld w(4);
  // n02 and n03 already run k2: in sync. n03 is drained by an admin: someone works on it.
  for (const char* n : {"n02", "n03"}) w.fake.node(n).running["kernel"] = w.fake.node(n).installed["kernel"] = "k2";
  REQUIRE(w.fake.Drain("n03", "RMA gpu3").ok());
  // n04 already shows the new stack: nothing to write.
  w.fake.node("n04").running["kernel"] = w.fake.node("n04").installed["kernel"] = "k2";
  w.fake.node("n04").tag = kNew;
  w.MakePlan();
  // n02's old tag was set by the apply its marker records (the old commit).
  w.plan.markers["n02"] = std::string(40, 'a');
  REQUIRE(w.plan.in_sync.size() == 3);
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(w.LogOf("n02") == std::vector<std::string>{"stack gpu-2025q4@cccccccccccc"});
  CHECK(w.LogOf("n03").empty());
  CHECK(w.fake.node("n03").tag == kOld);
  CHECK(w.LogOf("n04").empty());
  // The in-sync tags come first, before any node of the plan changes.
  REQUIRE_FALSE(w.fake.stack_log().empty());
  CHECK(w.fake.stack_log().front() == "n02: stack gpu-2025q4@cccccccccccc");
}

TEST_CASE("stack tags: a tag the scheduler refuses") {
  SUBCASE("at clear: the node stops before any change, drained, still showing the old stack") {
    StackWorld w(1);
    w.fake.node("n01").refuse_tag = true;
    auto r = w.Apply();
    CHECK(r.outcome == plans::RunState::kFailed);
    CHECK(fakes::RolloutBed::StatusOf(r, "n01") == "failed");
    CHECK(w.fake.Count("n01", "set kernel") == 0);
    CHECK(w.fake.node("n01").tag == kOld);
    CHECK(w.fake.node("n01").drain);
    CHECK(w.fake.node("n01").reason.find("failed:stack:clear") != std::string::npos);
  }
  SUBCASE("at set: the node is done and returns showing none, said in a note") {
    StackWorld w(1);
    w.fake.node("n01").tag = {};
    // The fake refuses every tag from the start; the clear has nothing to clear (skipped).
    w.fake.node("n01").refuse_tag = true;
    auto r = w.Apply();
    CHECK(r.outcome == plans::RunState::kDone);
    CHECK(w.fake.node("n01").running["kernel"] == "k2");
    CHECK(w.fake.node("n01").tag.empty());
    CHECK_FALSE(w.fake.node("n01").drain);
    bool said = false;
    for (const auto& e : w.observer.Of(plans::RolloutEvent::Kind::kNote))
      said = said || e.message.find("could not show stack gpu-2025q4@cccccccccccc") != std::string::npos;
    CHECK(said);
  }
}

TEST_CASE("stack tags: a run of some modules only leaves the tags as they are") {
  StackWorld w(1);
  w.MakePlan();
  w.plan.only_modules = {"kernel"};
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(w.LogOf("n01") == std::vector<std::string>{"resume showing gpu-2025q3@aaaaaaaaaaaa"});
  CHECK(w.fake.node("n01").tag == kOld);
}

TEST_CASE("stack tags: a crash at either stack step, then resume: converged, tagged, nothing twice") {
  int points = 0;
  for (const char* phase : {"intent", "outcome"}) {
    for (int nth : {1, 2}) {   // the first is stack:clear, the second stack:set
      const std::string point = fmt::format("stack.{}", phase);
      CAPTURE(point);
      CAPTURE(nth);
      StackWorld w(2, 1);
      std::atomic<int> seen{0};
      auto r = w.Apply(false, [&](const std::string& p) { return p == point && ++seen == nth; });
      REQUIRE(r.outcome == plans::RunState::kCrashed);
      ++points;
      auto r2 = w.Apply(true);
      CHECK(r2.outcome == plans::RunState::kDone);
      for (const char* n : {"n01", "n02"}) {
        CAPTURE(n);
        CHECK(w.fake.Count(n, "set kernel") == 1);
        CHECK(w.fake.node(n).tag == kNew);
        CHECK_FALSE(w.fake.node(n).drain);
      }
      CHECK(w.fake.violations().empty());
    }
  }
  CHECK(points == 4);
}

TEST_CASE("stack tags: in-sync nodes are tagged only over none or plumb's own tag, never a claimed one") {
  StackWorld w(4);
  for (const char* n : {"n01", "n02", "n03", "n04"})
    w.fake.node(n).running["kernel"] = w.fake.node(n).installed["kernel"] = "k2";
  // n01 shows none (lost in a restart); n02 a tag another run set since (another commit than
  // any plumb set for it); n03 is claimed by a run about to drain it; n04 the old stack at the
  // commit its marker names.
  w.fake.node("n01").tag = {};
  w.fake.node("n02").tag = {"gpu-2025q5", "bbbbbbbbbbbb"};
  w.fake.node("n03").comment = modules::ClaimToken({"20261231-000000-aaaa", 1});
  w.MakePlan();
  w.plan.markers["n04"] = std::string(40, 'a');
  REQUIRE(w.plan.in_sync.size() == 4);
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(w.fake.node("n01").tag == kNew);
  CHECK(w.fake.node("n02").tag == modules::StackTag{"gpu-2025q5", "bbbbbbbbbbbb"});
  CHECK(w.fake.node("n03").tag == kOld);
  CHECK(w.fake.node("n04").tag == kNew);
}

TEST_CASE("stack tags: a stack name no scheduler can carry shows none, never the old tag") {
  StackWorld w(1);
  w.stack_name = "gpu.";   // a valid file name, not a Kubernetes label value
  auto r = w.Apply();
  CHECK(r.outcome == plans::RunState::kDone);
  CHECK(w.fake.node("n01").tag.empty());
  CHECK(w.fake.violations().empty());
}
