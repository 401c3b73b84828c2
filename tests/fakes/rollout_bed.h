#pragma once
/// The rollout engine's test bed, shared by the engine's tests (rollout_test: the state machine;
/// rollout_safety_test: runs and operators meeting): n nodes n01..nN on a FakeCluster with
/// kernel k1 -> k2 (a reboot module) and sysctl s1 (no disruption), one rollout policy "roll",
/// a SQLite journal in a fresh file, an observer that keeps every event, and the fakes wired
/// into RolloutDeps. Each test file adds the knobs of its own (crash hooks, lock expiry...).
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fakes/fake_cluster.h"
#include "plans/plan/planner.h"
#include "plans/rollout/rollout.h"

namespace plumb::fakes {

/// Keeps every event the engine emits (thread-safe: node threads emit concurrently).
class RecordingObserver final : public plans::Observer {
 public:
  void OnEvent(const plans::RolloutEvent& e) override {
    std::lock_guard lock(mu_);
    events.push_back(e);
  }
  std::vector<plans::RolloutEvent> Of(plans::RolloutEvent::Kind k) {
    std::lock_guard lock(mu_);
    std::vector<plans::RolloutEvent> out;
    for (const auto& e : events)
      if (e.kind == k) out.push_back(e);
    return out;
  }
  std::mutex mu_;
  std::vector<plans::RolloutEvent> events;
};

/// A fresh journal path; tmpfs when there is one: the journal fsyncs every step, which a disk
/// makes slow.
inline std::string RolloutJournalPath(const std::string& stem) {
  static std::mt19937_64 rng(std::random_device{}());
  const std::filesystem::path dir = std::filesystem::is_directory("/dev/shm")
                                        ? std::filesystem::path("/dev/shm")
                                        : std::filesystem::temp_directory_path();
  return (dir / fmt::format("plumb-{}-{:x}.db", stem, rng())).string();
}

struct RolloutBed {
  FakeClock clock;
  FakeCluster fake{clock};
  FakeLeases leases{clock};
  FakeModule kernel{"kernel", modules::Disruption::kReboot};
  FakeModule sysctl{"sysctl", modules::Disruption::kNone};
  const modules::Module* kernel_module = nullptr;   ///< stands in for `kernel` when set
  inventory::Cluster cluster;
  plans::DesiredByNode desired;
  inventory::RolloutPolicy policy;
  std::string journal_path;
  std::unique_ptr<plans::Journal> journal;
  RecordingObserver observer;
  std::atomic<bool> stop{false};
  plans::Plan plan;
  std::string run_id = "20270101-000000-abcd";
  std::string plan_now;   ///< the planner's "now" (empty: the planner's default)

  RolloutBed(const std::string& stem, int n, int max_unavailable, int canary)
      : journal_path(RolloutJournalPath(stem)) {
    policy.name = "roll";
    policy.max_unavailable_count = max_unavailable;
    policy.canary = canary;
    policy.drain_timeout_s = 3600;
    cluster.name = "t";
    cluster.source.commit = std::string(40, 'c');
    for (int i = 1; i <= n; ++i) {
      inventory::Node node;
      node.name = fmt::format("n{:02}", i);
      cluster.nodes.push_back(node);
      inventory::NodeDesired nd;
      nd.node = node.name;
      nd.rollout = "roll";
      nd.desired = {{"kernel", "k2"}, {"sysctl", "s1"}};
      desired[node.name] = nd;
      fake.Add(node.name, {{"kernel", "k1"}, {"sysctl", "s1"}});
    }
    auto j = plans::OpenSqliteJournal(journal_path);
    REQUIRE(j.ok());
    journal = std::move(*j);
  }
  ~RolloutBed() {
    journal.reset();
    for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(journal_path + ext);
  }
  RolloutBed(const RolloutBed&) = delete;
  RolloutBed& operator=(const RolloutBed&) = delete;

  const modules::Module* Find(std::string_view name) const {
    if (name == "kernel") return kernel_module ? kernel_module : &kernel;
    if (name == "sysctl") return &sysctl;
    return nullptr;
  }

  /// Plans from what the fake cluster looks like now (the scheduler's view included).
  void MakePlan() {
    cluster.rollouts["roll"] = policy;
    plans::PlannerInput in;
    in.cluster = &cluster;
    in.desired = &desired;
    in.modules = {&kernel, &sysctl};
    in.scheduler = *fake.Query({});
    if (!plan_now.empty()) in.now = plan_now;
    for (const auto& n : cluster.nodes) in.observed[n.name] = fake.Probe(n.name);
    plan = plans::MakePlan(in);
    REQUIRE_FALSE(plan.diags.HasErrors());
  }

  /// The run record BeginRun takes for run_id.
  plans::RunRecord Record(const std::string& plan_digest = "sha256:x") {
    plans::RunRecord r;
    r.id = run_id;
    r.cluster = "t";
    r.plan_digest = plan_digest;
    r.plan_json = "{}";
    r.commit = plan.source.commit;
    r.started_at = plans::Rfc3339(clock.Now());
    return r;
  }

  /// The fakes as the engine's dependencies: the journal, the cluster as scheduler, prober and
  /// transport, leases when asked, this bed's modules, clock, observer and stop flag.
  plans::RolloutDeps Deps(bool with_leases) {
    plans::RolloutDeps d;
    d.journal = journal.get();
    d.drainer = &fake;
    d.prober = &fake;
    d.transport = &fake;
    if (with_leases) d.leases = &leases;
    d.modules = [this](std::string_view n) { return Find(n); };
    d.clock = &clock;
    d.observer = &observer;
    d.stop = &stop;
    return d;
  }

  static std::string StatusOf(const plans::RolloutResult& r, const std::string& node) {
    for (const auto& o : r.nodes)
      if (o.node == node) return std::string(plans::Name(o.status));
    return "?";
  }
};

}  // namespace plumb::fakes
