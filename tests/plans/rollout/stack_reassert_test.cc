// StackTagChanges / ReadStackView / WriteStackTags: the tags `plumb drift --tag-stacks` writes
// from a read of the nodes, and nothing but tags.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "plans/rollout/stack_reassert.h"

using namespace plumb;

namespace {

// A scheduler that shows stacks; records SetStack; any drain or resume fails the test.
class Tagging final : public modules::Drainer {
 public:
  std::map<std::string, modules::SchedulerNode> nodes;
  std::vector<std::string> writes;
  std::set<std::string> refuse;
  std::string_view Name() const override { return "slurm"; }
  bool ShowsStacks() const override { return true; }
  Result<std::map<std::string, modules::SchedulerNode>> Query(const std::vector<std::string>& want) override {
    std::map<std::string, modules::SchedulerNode> out;
    for (const auto& [name, n] : nodes)
      if (std::find(want.begin(), want.end(), name) != want.end()) out[name] = n;
    return out;
  }
  Status Drain(const std::string&, const std::string&) override {
    FAIL("tagging drained a node");
    return OkStatus();
  }
  Status Resume(const std::string&) override {
    FAIL("tagging resumed a node");
    return OkStatus();
  }
  Status SetStack(const modules::SchedulerNode& current, const modules::StackTag& tag) override {
    if (refuse.count(current.name)) return Diagnostic::Error("slurm.update", "Invalid feature specification");
    writes.push_back(current.name + " " + modules::TagText(tag));
    nodes[current.name].stack_tag = tag;
    return OkStatus();
  }
};

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

struct TagWorld {
  plans::DesiredByNode desired;
  plans::Plan plan;
  plans::Schedulers schedulers;
  Tagging* sched = nullptr;

  TagWorld() {
    auto t = std::make_unique<Tagging>();
    sched = t.get();
    schedulers.by_kind[inventory::DrainScheduler::kSlurm] = std::move(t);
    schedulers.by_rollout["roll"] = sched;
    for (const char* n : {"n1", "n2", "n3", "n4", "n5", "n6"}) {
      inventory::NodeDesired nd;
      nd.node = n;
      nd.stack = "gpu-2025q4";
      nd.rollout = "roll";
      desired[n] = nd;
      modules::SchedulerNode sn;
      sn.name = n;
      sn.state = "idle";
      sched->nodes[n] = sn;
    }
  }
  void Changes(const std::string& node, plans::ChangeReason why) {
    plans::NodePlan np;
    np.node = node;
    np.rollout = "roll";
    plans::PlannedAction pa;
    pa.action.id = "sysctl.set";
    pa.reason = why;
    np.actions.push_back(pa);
    plan.nodes.push_back(np);
  }
};

}  // namespace

TEST_CASE("stack re-assert: in sync shows the commit's stack, drift shows none, intent and runs are left") {
  TagWorld w;
  // n1: in sync, lost its tag (slurmctld restarted). n2: in sync, tagged already.
  // n3: drifted from its commit (repair). n4: only new intent, still on the old stack.
  // n5: in sync, but drained by a plumb run. n6: unreadable (in neither list).
  w.plan.in_sync = {"n1", "n2", "n5"};
  w.sched->nodes["n2"].stack_tag = {"gpu-2025q4", "0123456789ab"};
  w.Changes("n3", plans::ChangeReason::kRepair);
  w.sched->nodes["n3"].stack_tag = {"gpu-2025q4", "0123456789ab"};
  w.Changes("n4", plans::ChangeReason::kIntent);
  w.sched->nodes["n4"].stack_tag = {"gpu-2025q3", "aaaaaaaaaaaa"};
  w.sched->nodes["n5"].drain = true;
  w.sched->nodes["n5"].reason = "plumb:20270101-000000-abcd:drain";

  auto view = plans::ReadStackView(w.schedulers, w.desired);
  REQUIRE(view.ok());
  CHECK(view->size() == 6);
  auto changes = plans::StackTagChanges(w.plan, w.desired, *view, kCommit);
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].node == "n1");
  CHECK(changes[0].now == modules::StackTag{"gpu-2025q4", "0123456789ab"});
  CHECK(changes[0].was.empty());
  CHECK(changes[1].node == "n3");
  CHECK(changes[1].now.empty());
  CHECK(changes[1].why.find("repair") != std::string::npos);

  Diagnostics diags;
  auto done = plans::WriteStackTags(w.schedulers, w.desired, *view, changes, diags);
  CHECK(done.size() == 2);
  CHECK(diags.empty());
  CHECK(w.sched->writes == std::vector<std::string>{"n1 gpu-2025q4@0123456789ab", "n3 (none)"});
  CHECK(w.sched->nodes["n4"].stack_tag == modules::StackTag{"gpu-2025q3", "aaaaaaaaaaaa"});
}

TEST_CASE("stack re-assert: a refused tag is a warning naming the node; the others are written") {
  TagWorld w;
  w.plan.in_sync = {"n1", "n2"};
  w.sched->refuse = {"n1"};
  auto view = plans::ReadStackView(w.schedulers, w.desired);
  REQUIRE(view.ok());
  Diagnostics diags;
  auto done = plans::WriteStackTags(w.schedulers, w.desired, *view,
                                    plans::StackTagChanges(w.plan, w.desired, *view, kCommit), diags);
  REQUIRE(done.size() == 1);
  CHECK(done[0].node == "n2");
  REQUIRE(diags.items().size() == 1);
  CHECK(diags.items()[0].message.find("n1: could not show stack gpu-2025q4@0123456789ab") == 0);
}

TEST_CASE("stack re-assert: a stack name no label can carry is left untagged") {
  TagWorld w;
  w.desired["n1"].stack = "gpu.";   // a valid file name, not a valid label value
  w.plan.in_sync = {"n1"};
  auto view = plans::ReadStackView(w.schedulers, w.desired);
  REQUIRE(view.ok());
  CHECK(plans::StackTagChanges(w.plan, w.desired, *view, kCommit).empty());
}

TEST_CASE("stack re-assert: a claimed node and a tag another run set are left; a name no label carries shows none") {
  TagWorld w;
  w.plan.in_sync = {"n1", "n2", "n3"};
  // n1: claimed by a run about to drain it. n2: shows a commit neither this one nor its
  // marker's (another run's). n3: its stack cannot be a label value, and it shows the old one.
  w.sched->nodes["n1"].claim = modules::NodeClaim{"20270101-000000-abcd", 1};
  w.sched->nodes["n2"].stack_tag = {"gpu-2025q5", "bbbbbbbbbbbb"};
  w.plan.markers["n2"] = std::string(40, 'a');
  w.desired["n3"].stack = "gpu.";
  w.sched->nodes["n3"].stack_tag = {"gpu-2025q3", "aaaaaaaaaaaa"};
  w.plan.markers["n3"] = std::string(40, 'a');
  auto view = plans::ReadStackView(w.schedulers, w.desired);
  REQUIRE(view.ok());
  auto changes = plans::StackTagChanges(w.plan, w.desired, *view, kCommit);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].node == "n3");
  CHECK(changes[0].now.empty());
}
