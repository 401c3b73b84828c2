// Admission of a batch, without threads or a scheduler: the counting the engine relies on.
#include <doctest/doctest.h>

#include "plans/rollout/admission.h"

using namespace plumb;
using plans::AdmissionGates;
using plans::BatchAdmission;
using Kind = BatchAdmission::Decision::Kind;

namespace {

modules::SchedulerNode Idle(const std::string& n) {
  modules::SchedulerNode s;
  s.name = n;
  s.state = "idle";
  return s;
}
modules::SchedulerNode Drained(const std::string& n, const std::string& reason) {
  modules::SchedulerNode s = Idle(n);
  s.state = "drained";
  s.drain = s.drained = true;
  s.reason = reason;
  return s;
}
std::map<std::string, modules::SchedulerNode> View(
    std::initializer_list<modules::SchedulerNode> nodes) {
  std::map<std::string, modules::SchedulerNode> v;
  for (const auto& n : nodes) v[n.name] = n;
  return v;
}

}  // namespace

TEST_CASE("admission: nodes start while the budget allows, the rest wait for a slot") {
  // Scope of four, max_unavailable 2, all three batch nodes drain.
  BatchAdmission adm({"n1", "n2", "n3"}, {"n1", "n2", "n3", "n4"}, 2, false,
                     {"n1", "n2", "n3"}, "R1");
  adm.See(View({Idle("n1"), Idle("n2"), Idle("n3"), Idle("n4")}));
  auto a = adm.Next({});
  REQUIRE(a.kind == Kind::kAdmit);
  CHECK(a.node == "n1");
  CHECK(a.with_slot);
  auto b = adm.Next({});
  REQUIRE(b.kind == Kind::kAdmit);
  CHECK(b.node == "n2");
  // Two of ours hold the two slots, though the view does not show their drains yet.
  CHECK(adm.Next({}).kind == Kind::kWait);
  CHECK(adm.Out() == std::vector<std::string>{"n1", "n2"});
  CHECK(adm.running() == 2);
  CHECK_FALSE(adm.Blocked());   // ours are running: their end frees a slot

  // n1 ends back in service; the next view shows n2 drained (by us) and n1 up.
  adm.Ended("n1", plans::NodeState::kDone);
  adm.See(View({Idle("n1"), Drained("n2", "plumb:R1:drain"), Idle("n3"), Idle("n4")}));
  auto c = adm.Next({});
  REQUIRE(c.kind == Kind::kAdmit);
  CHECK(c.node == "n3");
  CHECK(adm.Next({}).kind == Kind::kEmpty);
  adm.Ended("n2", plans::NodeState::kDone);
  adm.Ended("n3", plans::NodeState::kDone);
  CHECK(adm.Idle());
}

TEST_CASE("admission: nodes out for any reason count, and a node already out costs no slot") {
  // An admin drained n4 (outside the batch) and n2 (in it): one slot left of two.
  BatchAdmission adm({"n1", "n2", "n3"}, {"n1", "n2", "n3", "n4"}, 2, false,
                     {"n1", "n2", "n3"}, "R1");
  adm.See(View({Idle("n1"), Drained("n2", "RMA gpu3"), Idle("n3"), Drained("n4", "PSU")}));
  CHECK(adm.Out() == std::vector<std::string>{"n2", "n4"});
  // Out = 2 = limit: n1 needs a slot and must wait.
  CHECK(adm.Next({}).kind == Kind::kWait);
  CHECK(adm.Blocked());
  CHECK(adm.BlockedReason() ==
        "max_unavailable 2 reached: 2 node(s) out (n2 n4); 3 node(s) could not start");
  // The admin returns n4: n1 starts with the slot; n2, already out, starts without one.
  adm.See(View({Idle("n1"), Drained("n2", "RMA gpu3"), Idle("n3"), Idle("n4")}));
  auto a = adm.Next({});
  REQUIRE(a.kind == Kind::kAdmit);
  CHECK((a.node == "n1" && a.with_slot));
  auto b = adm.Next({});
  REQUIRE(b.kind == Kind::kAdmit);
  CHECK((b.node == "n2" && !b.with_slot));
  CHECK(adm.Next({}).kind == Kind::kWait);   // n3: n1 (ours) + n2 (admin) = 2
}

TEST_CASE("admission: a node whose plan does not drain it never waits for a slot") {
  BatchAdmission adm({"n1", "n2"}, {"n1", "n2"}, 1, false, {"n1"}, "R1");
  adm.See(View({Drained("n1", "x"), Drained("n2", "y")}));
  // n1 is already out (no slot); n2 does not drain: both start over a spent budget.
  CHECK(adm.Next({}).kind == Kind::kAdmit);
  auto b = adm.Next({});
  REQUIRE(b.kind == Kind::kAdmit);
  CHECK_FALSE(b.with_slot);
}

TEST_CASE("admission: gates stop, halt and pause before any budget question") {
  BatchAdmission adm({"n1", "n2"}, {"n1", "n2"}, 2, false, {"n1", "n2"}, "R1");
  adm.See(View({Idle("n1"), Idle("n2")}));
  CHECK(adm.Next({.stopping = true}).kind == Kind::kStop);
  CHECK(adm.Next({.scheduler_down = true}).kind == Kind::kStop);
  auto h = adm.Next({.failures = 2, .max_failures = 1});
  CHECK(h.kind == Kind::kHalt);
  CHECK(h.reason == "2 node(s) failed, more than max_failures (1)");
  CHECK(adm.Next({.failures = 1, .max_failures = 1}).kind == Kind::kAdmit);   // at the limit
  CHECK(adm.Next({.window_open = false}).kind == Kind::kPause);
  CHECK(adm.queue().size() == 1);   // nothing was taken off by a gate
}

TEST_CASE("admission: one failure in the canary batch halts it; elsewhere max_failures decides") {
  BatchAdmission canary({"c1", "c2"}, {"c1", "c2"}, 2, true, {"c1", "c2"}, "R1");
  canary.See(View({Idle("c1"), Idle("c2")}));
  REQUIRE(canary.Next({}).kind == Kind::kAdmit);
  canary.Ended("c1", plans::NodeState::kFailed);
  auto h = canary.Next({.failures = 1, .max_failures = 5});
  CHECK(h.kind == Kind::kHalt);
  CHECK(h.reason == "the canary batch failed");
  CHECK(canary.batch_failures() == 1);

  BatchAdmission rest({"n1", "n2"}, {"n1", "n2"}, 2, false, {"n1", "n2"}, "R1");
  rest.See(View({Idle("n1"), Idle("n2")}));
  REQUIRE(rest.Next({}).kind == Kind::kAdmit);
  rest.Ended("n1", plans::NodeState::kFailed);
  CHECK(rest.Next({.failures = 1, .max_failures = 5}).kind == Kind::kAdmit);
}

TEST_CASE("admission: a node that gave way goes to the back of the queue and frees its slot") {
  BatchAdmission adm({"n1", "n2"}, {"n1", "n2", "n3"}, 1, false, {"n1", "n2"}, "R1");
  adm.See(View({Idle("n1"), Idle("n2"), Idle("n3")}));
  REQUIRE(adm.Next({}).node == "n1");
  adm.Requeue("n1");   // another run's older claim won
  CHECK(adm.running() == 0);
  CHECK(adm.queue() == std::deque<std::string>{"n2", "n1"});
  CHECK(adm.Next({}).node == "n2");
  CHECK(adm.TakeQueue() == std::vector<std::string>{"n1"});
  CHECK(adm.queue().empty());
}

TEST_CASE("admission: another plumb run's drains are named, this run's and failed ones are not") {
  BatchAdmission adm({"n1"}, {"n1", "n2", "n3", "n4"}, 1, false, {"n1"}, "R1");
  adm.See(View({Idle("n1"), Drained("n2", "plumb:R1:drain"),
                Drained("n3", "plumb:R0:failed:verify: kernel"), Idle("n4")}));
  CHECK(adm.OtherRunHolding().empty());
  adm.See(View({Idle("n1"), Drained("n2", "plumb:R1:drain"), Drained("n4", "plumb:R9:drain")}));
  CHECK(adm.OtherRunHolding() == "R9");
}
