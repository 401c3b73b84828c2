// CountStacks: the nodes the schedulers show on each stack now and after the plan, and the
// jobs a stack's last node leaves behind.
#include <doctest/doctest.h>

#include "plans/plan/stack_counts.h"

using namespace plumb;

namespace {

struct CountWorld {
  plans::Plan plan;
  plans::DesiredByNode desired;
  std::map<std::string, modules::SchedulerNode> view;
  std::vector<modules::StackRequest> requests;

  void Node(const std::string& name, const std::string& shows, const std::string& wants,
            bool shows_stacks = true) {
    modules::SchedulerNode sn;
    sn.name = name;
    sn.shows_stacks = shows_stacks;
    sn.stack_tag = {shows, shows.empty() ? "" : "aaaaaaaaaaaa"};
    view[name] = sn;
    inventory::NodeDesired nd;
    nd.node = name;
    nd.stack = wants;
    desired[name] = nd;
  }
  void Planned(const std::string& name) {
    plans::NodePlan np;
    np.node = name;
    plan.nodes.push_back(np);
  }
  const plans::StackCount* Of(const std::vector<plans::StackCount>& cs, const std::string& s) {
    for (const auto& c : cs)
      if (c.stack == s) return &c;
    return nullptr;
  }
};

}  // namespace

TEST_CASE("stack counts: now from the tags, after from the plan; the last node's jobs named") {
  CountWorld w;
  w.plan.source.commit = std::string(40, 'c');
  // q3 -> q4 on n1, n2 (planned); n3 in sync on q4; n4 unreadable (keeps q3... but is not
  // planned, so q3 keeps a node); n5's scheduler shows no stacks (not counted).
  w.Node("n1", "q3", "q4");
  w.Node("n2", "q3", "q4");
  w.Node("n3", "q4", "q4");
  w.Node("n5", "", "q4", /*shows_stacks=*/false);
  w.Planned("n1");
  w.Planned("n2");
  w.plan.in_sync = {"n3"};
  w.requests = {{"12", "alice", "train", "PENDING", "q3"}, {"13", "bob", "eval", "RUNNING", "q4"}};
  auto cs = plans::CountStacks(w.plan, w.desired, w.view, w.requests);
  REQUIRE(cs.size() == 2);
  const auto* q3 = w.Of(cs, "q3");
  REQUIRE(q3);
  CHECK(q3->now == 2);
  CHECK(q3->after == 0);
  REQUIRE(q3->stranded.size() == 1);
  CHECK(q3->stranded[0].id == "12");
  const auto* q4 = w.Of(cs, "q4");
  REQUIRE(q4);
  CHECK(q4->now == 1);
  CHECK(q4->after == 3);
  CHECK(q4->stranded.empty());

  SUBCASE("a job that asks for q3 or q4 is not stranded: q4 keeps nodes") {
    w.requests.push_back({"14", "carol", "sweep", "PENDING", "q3"});
    w.requests.push_back({"14", "carol", "sweep", "PENDING", "q4"});
    cs = plans::CountStacks(w.plan, w.desired, w.view, w.requests);
    REQUIRE(w.Of(cs, "q3")->stranded.size() == 1);
    CHECK(w.Of(cs, "q3")->stranded[0].id == "12");
  }
  SUBCASE("an in-sync node out of service keeps what it shows (apply does not tag it)") {
    w.view["n3"].drain = true;
    cs = plans::CountStacks(w.plan, w.desired, w.view, w.requests);
    CHECK(w.Of(cs, "q4")->after == 3);   // it showed q4 already
    w.view["n3"].stack_tag = {"q3", "aaaaaaaaaaaa"};
    cs = plans::CountStacks(w.plan, w.desired, w.view, w.requests);
    CHECK(w.Of(cs, "q3")->after == 1);
    CHECK(w.Of(cs, "q3")->stranded.empty());
  }
  SUBCASE("a node the plan does not change keeps its stack: q3 is not stranded") {
    w.Node("n4", "q3", "q4");   // unreadable: in neither list
    cs = plans::CountStacks(w.plan, w.desired, w.view, w.requests);
    CHECK(w.Of(cs, "q3")->after == 1);
    CHECK(w.Of(cs, "q3")->stranded.empty());
  }
  SUBCASE("a node skipped as unhealthy or held by another run keeps its stack too") {
    w.plan.nodes[0].skipped_unhealthy = true;
    cs = plans::CountStacks(w.plan, w.desired, w.view, w.requests);
    CHECK(w.Of(cs, "q3")->after == 1);
    w.plan.nodes[0].skipped_unhealthy = false;
    w.plan.nodes[1].held_by_run = "20270101-000000-abcd";
    cs = plans::CountStacks(w.plan, w.desired, w.view, w.requests);
    CHECK(w.Of(cs, "q3")->after == 1);
  }
}

TEST_CASE("stack counts: StrandedText names the first five and counts the rest") {
  plans::StackCount c;
  c.stack = "q3";
  for (int i = 0; i < 7; ++i) c.stranded.push_back({std::to_string(i), "u", "j", "PENDING", "q3"});
  CHECK(plans::StrandedText(c) == "0 (u: j, PENDING), 1 (u: j, PENDING), 2 (u: j, PENDING), "
                                  "3 (u: j, PENDING), 4 (u: j, PENDING) and 2 more");
}
