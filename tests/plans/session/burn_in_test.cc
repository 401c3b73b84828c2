// Acceptance's burn-in (plans/session/burn_in): the desired state at the burn-in DCGM level,
// and results kept in DIR/nodes/ reused only for the same commit and level, never a failure.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "plans/session/burn_in.h"

using namespace plumb;

namespace {

struct BurnDir {
  BurnDir() {
    path = (std::filesystem::temp_directory_path() /
            ("plumb-burn-in-" + std::to_string(::getpid()) + "-" + std::to_string(++n)))
               .string();
    std::filesystem::create_directories(path + "/nodes");
  }
  ~BurnDir() { std::filesystem::remove_all(path); }
  void Keep(const plans::NodeHealth& h, const std::string& commit, int level) {
    std::ofstream(plans::KeptHealthPath(path, h.node))
        << plans::KeptHealthRecord(h, commit, level, "2027-01-01T00:00:00.000Z").dump();
  }
  std::string path;
  static inline int n = 0;
};

plans::NodeHealth PassedHealth(const std::string& node) {
  plans::NodeHealth h;
  h.node = node;
  return h;
}

const std::string kBurnCommit(40, 'c');

// Three nodes pinning DCGM at level 1 with a short timeout, as a stack would for daily checks.
inventory::LoadedCluster BurnCluster() {
  inventory::LoadedCluster lc;
  for (const char* name : {"gpu001", "gpu002", "gpu003"}) {
    inventory::Node n;
    n.name = name;
    lc.cluster.nodes.push_back(n);
    inventory::NodeDesired nd;
    nd.node = name;
    nd.desired = nlohmann::json{{"health", {{"dcgm", {{"level", 1}, {"timeout_s", 60}}}}}};
    lc.desired[name] = nd;
  }
  return lc;
}

}  // namespace

TEST_CASE("BurnInDesired: DCGM at the burn-in level, without the stack's timeout for its own level") {
  nlohmann::json want = {{"health", {{"dcgm", {{"level", 1}, {"timeout_s", 60}}}}}, {"kernel", "6.8"}};
  nlohmann::json burn = plans::BurnInDesired(want, 3);
  CHECK(burn["health"]["dcgm"]["level"] == 3);
  CHECK_FALSE(burn["health"]["dcgm"].contains("timeout_s"));
  CHECK(burn["kernel"] == "6.8");
  nlohmann::json none = {{"kernel", "6.8"}};
  CHECK(plans::BurnInDesired(none, 3) == none);   // no DCGM pinned: nothing added
}

TEST_CASE("KeptHealth: a kept pass is reused at the same commit and level only") {
  BurnDir d;
  d.Keep(PassedHealth("gpu001"), kBurnCommit, 3);
  auto same = plans::KeptHealth(d.path, "gpu001", kBurnCommit, 3);
  REQUIRE(same.has_value());
  CHECK(same->node == "gpu001");
  CHECK_FALSE(plans::KeptHealth(d.path, "gpu001", std::string(40, 'd'), 3));   // another commit
  CHECK_FALSE(plans::KeptHealth(d.path, "gpu001", kBurnCommit, 4));                // another level
  CHECK_FALSE(plans::KeptHealth(d.path, "gpu002", kBurnCommit, 3));                // none kept
  // A failure is never reused: the node may have been repaired since.
  plans::NodeHealth failed = PassedHealth("gpu002");
  failed.problems.Add(Diagnostic::Error("health.script", "the script did not run"));
  d.Keep(failed, kBurnCommit, 3);
  CHECK_FALSE(plans::KeptHealth(d.path, "gpu002", kBurnCommit, 3));
  // A file that names another node is not this node's result.
  std::filesystem::copy_file(plans::KeptHealthPath(d.path, "gpu001"),
                             plans::KeptHealthPath(d.path, "gpu003"));
  CHECK_FALSE(plans::KeptHealth(d.path, "gpu003", kBurnCommit, 3));
}

TEST_CASE("PlanBurnIn: kept nodes are not checked again, the others run at the burn-in level") {
  BurnDir d;
  d.Keep(PassedHealth("gpu001"), kBurnCommit, 3);
  const inventory::LoadedCluster lc = BurnCluster();
  plans::SchedulerView view;
  view.nodes["gpu003"].running_jobs = 1;
  view.nodes["gpu003"].jobs = {"1234 (alice: train)"};
  plans::BurnIn b = plans::PlanBurnIn({"gpu001", "gpu002", "gpu003", "gpu404"}, lc, view,
                                      {.dir = d.path, .commit = kBurnCommit, .level = 3});
  REQUIRE(b.kept.size() == 1);
  CHECK(b.kept[0].node == "gpu001");
  REQUIRE(b.targets.size() == 2);   // gpu404 is not in the repo
  CHECK(b.targets[0].node->name == "gpu002");
  CHECK((*b.targets[0].desired)["health"]["dcgm"]["level"] == 3);
  CHECK(b.targets[0].hold_on_demand.empty());
  CHECK(b.targets[1].node->name == "gpu003");   // busy: its GPU-loading checks are held
  CHECK(b.targets[1].hold_on_demand == "1 job(s) running: 1234 (alice: train)");

  plans::BurnIn fresh = plans::PlanBurnIn(
      {"gpu001", "gpu003"}, lc, view,
      {.dir = d.path, .commit = kBurnCommit, .level = 3, .reuse_kept = false, .allow_busy = true});
  CHECK(fresh.kept.empty());
  REQUIRE(fresh.targets.size() == 2);
  CHECK(fresh.targets[1].hold_on_demand.empty());
}
