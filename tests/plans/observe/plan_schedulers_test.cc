// ReadOnlySchedulers: plan's view of every scheduler the rollout policies drain through;
// NodesUnknownToScheduler: inventory names the scheduler does not know.
#include <doctest/doctest.h>

#include <algorithm>

#include <fmt/format.h>

#include "plans/observe/plan_schedulers.h"
#include "plans/report/report_fixture.h"

using namespace plumb;

namespace {

// A scheduler that knows `nodes` and records what it was asked; writes fail the test.
class Recording final : public modules::Drainer {
 public:
  explicit Recording(std::string name) : name_(std::move(name)) {}
  std::map<std::string, modules::SchedulerNode> nodes;
  std::vector<std::vector<std::string>> asked;
  bool fail = false;
  std::string_view Name() const override { return name_; }
  Result<std::map<std::string, modules::SchedulerNode>> Query(const std::vector<std::string>& want) override {
    asked.push_back(want);
    if (fail) return Diagnostic::Error("scheduler.unavailable", name_ + " unavailable: down");
    std::map<std::string, modules::SchedulerNode> out;
    for (const auto& [name, n] : nodes)
      if (want.empty() || std::find(want.begin(), want.end(), name) != want.end()) out[name] = n;
    return out;
  }
  Status Drain(const std::string&, const std::string&) override {
    FAIL("the plan's view drained a node");
    return OkStatus();
  }
  Status Resume(const std::string&) override {
    FAIL("the plan's view resumed a node");
    return OkStatus();
  }

 private:
  std::string name_;
};

modules::SchedulerNode Node(const std::string& name, bool drain = false) {
  modules::SchedulerNode n;
  n.name = name;
  n.drain = drain;
  n.state = drain ? "drained" : "idle";
  return n;
}

// gpu001, gpu002 in the Slurm pool ("roll"), gpu003, gpu004 in the Kubernetes one ("k8s").
struct MixedWorld : testing::ReportWorld {
  Recording* slurm = nullptr;
  Recording* kube = nullptr;
  MixedWorld() {
    cluster.rollouts["roll"].name = "roll";
    cluster.rollouts["k8s"].name = "k8s";
    cluster.rollouts["k8s"].scheduler = inventory::DrainScheduler::kKubernetes;
    desired["gpu003"].rollout = "k8s";
    desired["gpu004"].rollout = "k8s";
    for (size_t i = 0; i < cluster.nodes.size(); ++i)
      cluster.nodes[i].where = {"inventory.yaml", static_cast<int>(i) + 3, 5};
  }
  plans::Schedulers Make() {
    return plans::SchedulersFor(cluster, [&](inventory::DrainScheduler kind) -> std::unique_ptr<modules::Drainer> {
      auto d = std::make_unique<Recording>(kind == inventory::DrainScheduler::kSlurm ? "slurm" : "kubernetes");
      (kind == inventory::DrainScheduler::kSlurm ? slurm : kube) = d.get();
      return d;
    });
  }
};

}  // namespace

TEST_CASE("plan's schedulers: each node is read from its own policy's scheduler, each scheduler "
          "asked about its own nodes only") {
  MixedWorld w;
  plans::ReadOnlySchedulers view(w.cluster, w.desired, w.Make());
  REQUIRE(w.slurm);
  REQUIRE(w.kube);
  // Slurm lists every node (gpu003 too, idle there); Kubernetes shows gpu003 cordoned.
  for (const char* n : {"gpu001", "gpu002", "gpu003", "gpu004"}) w.slurm->nodes[n] = Node(n);
  w.kube->nodes["gpu003"] = Node("gpu003", true);
  w.kube->nodes["gpu004"] = Node("gpu004");
  auto q = view.Query({});
  REQUIRE(q.ok());
  CHECK(q->size() == 4);
  CHECK(q->at("gpu003").drain);   // Kubernetes' word, not Slurm's
  REQUIRE(w.slurm->asked.size() == 1);
  CHECK(w.slurm->asked[0] == std::vector<std::string>{"gpu001", "gpu002"});
  REQUIRE(w.kube->asked.size() == 1);
  CHECK(w.kube->asked[0] == std::vector<std::string>{"gpu003", "gpu004"});

  SUBCASE("a --limit within one pool reads that pool's scheduler only") {
    q = view.Query({"gpu002"});
    REQUIRE(q.ok());
    CHECK(q->size() == 1);
    CHECK(w.slurm->asked.size() == 2);
    CHECK(w.kube->asked.size() == 1);
  }
  SUBCASE("one scheduler that cannot be read fails the view (half a view would count a pool in service)") {
    w.kube->fail = true;
    q = view.Query({});
    REQUIRE_FALSE(q.ok());
    CHECK(q.error().message == "kubernetes unavailable: down");
  }
  SUBCASE("it only reads") {
    CHECK_FALSE(view.Drain("gpu001", "plumb:r1:drain").ok());
    CHECK_FALSE(view.Resume("gpu001").ok());
    CHECK_FALSE(view.Evict("gpu001").ok());
    CHECK_FALSE(view.SetClaim(Node("gpu001"), {"r1", 1}).ok());
  }
}

TEST_CASE("plan's schedulers: inventory names the scheduler does not know are named, per scheduler") {
  MixedWorld w;
  std::map<std::string, modules::SchedulerNode> view;
  view["gpu001"] = Node("gpu001");
  view["gpu003"] = Node("gpu003");
  auto d = plans::NodesUnknownToScheduler(w.cluster, w.desired, {}, view);
  REQUIRE(d);
  CHECK(d->severity == Severity::kWarning);
  CHECK(d->code == "plan.unknown-to-scheduler");
  CHECK(d->message == "2 node(s) are not known to the scheduler their rollout policy drains "
                      "through (slurm: gpu002; kubernetes: gpu004): apply would fail them at the drain");
  CHECK(d->where.ToString() == "inventory.yaml:4:5");   // gpu002's entry
  CHECK(d->hint.find("the scheduler's own") != std::string::npos);
  // Only the nodes asked about (the plan's --limit) are judged.
  CHECK_FALSE(plans::NodesUnknownToScheduler(w.cluster, w.desired, {"gpu001", "gpu003"}, view));
  // A pool without a scheduler (none) has no names to know.
  w.cluster.rollouts["roll"].scheduler = inventory::DrainScheduler::kNone;
  d = plans::NodesUnknownToScheduler(w.cluster, w.desired, {}, view);
  REQUIRE(d);
  CHECK(d->message.find("(kubernetes: gpu004)") != std::string::npos);
  view["gpu004"] = Node("gpu004");
  CHECK_FALSE(plans::NodesUnknownToScheduler(w.cluster, w.desired, {}, view));
}
