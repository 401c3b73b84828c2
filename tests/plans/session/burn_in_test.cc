// Acceptance's burn-in (plans/session/burn_in): the desired state at the burn-in DCGM level,
// and results kept in DIR/nodes/ reused only for the same commit and level, never a failure.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include <unistd.h>

#include "modules/registry.h"
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

namespace {

// No shell for gpu002 (unreachable); any other node's shell is never asked for here.
struct NoBurnShells final : plans::ShellFactory {
  std::unique_ptr<transport::Shell> Open(const inventory::Node& node) override {
    opened.push_back(node.name);
    return nullptr;
  }
  std::vector<std::string> opened;
};

}  // namespace

TEST_CASE("burn_in: the run says what was kept, keeps each node reached, not the unreachable") {
  BurnDir d;
  inventory::LoadedCluster lc = BurnCluster();
  lc.desired["gpu003"].desired = nlohmann::json{{"kernel", "6.8"}};   // pins no health check
  d.Keep(PassedHealth("gpu001"), kBurnCommit, 3);
  const plans::BurnInOptions o{.dir = d.path, .commit = kBurnCommit, .level = 3};
  plans::BurnIn b = plans::PlanBurnIn({"gpu001", "gpu002", "gpu003"}, lc, plans::SchedulerView{}, o);
  REQUIRE(b.kept.size() == 1);
  NoBurnShells shells;
  std::vector<std::string> said, written;
  plans::BurnInIo io{
      .write = [&](const std::string& path, const std::string& text) -> plumb::Status {
        written.push_back(path + " " + nlohmann::json::parse(text)["checked_at"].get<std::string>());
        return plumb::OkStatus();
      },
      .say = [&](const std::string& line) { said.push_back(line); },
      .now = [] { return std::string("2027-02-02T00:00:00.000Z"); }};
  std::vector<plans::NodeHealth> h =
      plans::RunBurnIn(b, o, shells, modules::AllModules(), 2, std::chrono::seconds(5), io);
  REQUIRE(h.size() == 3);
  CHECK(h[0].node == "gpu001");   // kept, first
  CHECK(h[1].node == "gpu002");
  CHECK_FALSE(h[1].reachable);
  CHECK(h[2].node == "gpu003");
  CHECK(shells.opened == std::vector<std::string>{"gpu002"});
  CHECK(written == std::vector<std::string>{plans::KeptHealthPath(d.path, "gpu003") +
                                            " 2027-02-02T00:00:00.000Z"});
  REQUIRE(said.size() == 3);
  CHECK(said[0] == "acceptance: 1 node(s) already checked at commit cccccccccccc (level 3) in " +
                       d.path + "; --fresh runs them again");
  CHECK(said[1].rfind("acceptance: health ", 0) == 0);
  CHECK(said[2].rfind("acceptance: health ", 0) == 0);
}

TEST_CASE("burn_in: a result that cannot be kept is a warning, and the run goes on") {
  BurnDir d;
  inventory::LoadedCluster lc = BurnCluster();
  lc.desired["gpu001"].desired = nlohmann::json::object();
  const plans::BurnInOptions o{.dir = d.path, .commit = kBurnCommit, .level = 3};
  plans::BurnIn b = plans::PlanBurnIn({"gpu001"}, lc, plans::SchedulerView{}, o);
  NoBurnShells shells;
  std::vector<std::string> said;
  plans::BurnInIo io{
      .write = [](const std::string&, const std::string&) -> plumb::Status {
        return Diagnostic::Error("output.write", "disk full");
      },
      .say = [&](const std::string& line) { said.push_back(line); },
      .now = [] { return std::string("2027-02-02T00:00:00.000Z"); }};
  auto h = plans::RunBurnIn(b, o, shells, modules::AllModules(), 1, std::chrono::seconds(5), io);
  REQUIRE(h.size() == 1);
  REQUIRE(said.size() == 2);   // nothing kept before: no "already checked" line
  CHECK(said[0] == "warning: " + Diagnostic::Error("output.write", "disk full").ToString());
  CHECK(said[1] == "acceptance: health 1/1: gpu001 pass");
}

TEST_CASE("burn_in: the operator is --operator, else $SUDO_USER, $USER, $LOGNAME, else unknown") {
  std::map<std::string, std::string> vars;
  plans::EnvLookup env = [&](const char* n) -> const char* {
    auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  CHECK(plans::OperatorName("", env) == "unknown");
  vars["LOGNAME"] = "log";
  CHECK(plans::OperatorName("", env) == "log");
  vars["USER"] = "";
  CHECK(plans::OperatorName("", env) == "log");   // empty: not set
  vars["USER"] = "user";
  CHECK(plans::OperatorName("", env) == "user");
  vars["SUDO_USER"] = "admin";
  CHECK(plans::OperatorName("", env) == "admin");
  CHECK(plans::OperatorName("Jane Doe", env) == "Jane Doe");
}

TEST_CASE("burn_in: the flags are checked and DIR/nodes made before anything is read") {
  auto no_out = plans::PrepareBurnInDir("", 3, 60, 4);
  REQUIRE(no_out);
  CHECK(no_out->outcome == Outcome::kRefused);
  CHECK(no_out->err == "error: --out DIR is required (the report's directory)\n");
  BurnDir d;
  std::filesystem::remove_all(d.path);
  for (auto [level, timeout, fanout] : {std::tuple{0, 60, 4}, std::tuple{5, 60, 4},
                                        std::tuple{3, 0, 4}, std::tuple{3, 60, 0}}) {
    auto bad = plans::PrepareBurnInDir(d.path, level, timeout, fanout);
    REQUIRE(bad);
    CHECK(bad->outcome == Outcome::kRefused);
    CHECK(bad->err == "error: --dcgm-level takes 1-4; --timeout and --health-fanout at least 1\n");
    CHECK_FALSE(std::filesystem::exists(d.path));   // refused: nothing made
  }
  CHECK_FALSE(plans::PrepareBurnInDir(d.path, 4, 1, 1));
  CHECK(std::filesystem::is_directory(d.path + "/nodes"));
  std::ofstream(d.path + "/file") << "x";
  auto blocked = plans::PrepareBurnInDir(d.path + "/file", 3, 60, 4);   // a file, not a folder
  REQUIRE(blocked);
  CHECK(blocked->outcome == Outcome::kError);
  CHECK(blocked->err.rfind("error: cannot create " + d.path + "/file/nodes: ", 0) == 0);
}
