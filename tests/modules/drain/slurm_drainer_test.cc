// SlurmDrainer over a scripted shell: a controller that cannot be reached is "unavailable"
// (never an empty cluster), whether sinfo says so in JSON, fails, or lists no node.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "modules/drain/slurm_drainer.h"

using namespace plumb;

namespace {

std::string SlurmDrainerData(const std::string& name) {
  std::ifstream f(std::string(PLUMB_TEST_DATA) + "/slurm/" + name);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Answers each command by its first word; records what ran.
class SlurmScriptedShell final : public transport::Shell {
 public:
  std::map<std::string, transport::CommandOutput> answers;
  std::vector<std::string> ran;
  Result<transport::CommandOutput> Run(std::string_view command,
                                       std::chrono::milliseconds) override {
    ran.emplace_back(command);
    for (const auto& [prefix, out] : answers)
      if (command.substr(0, prefix.size()) == prefix) return out;
    return transport::CommandOutput{127, "", "sh: not found"};
  }
};

}  // namespace

TEST_CASE("slurm drainer: sinfo --json with errors is unavailable; no scontrol guess follows") {
  SlurmScriptedShell sh;
  sh.answers["sinfo --json"] = {0, SlurmDrainerData("sinfo-22.05-controller-down.json"), ""};
  modules::SlurmDrainer d(sh);
  auto q = d.Query({"n1"});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == modules::kSchedulerUnavailable);
}

TEST_CASE("slurm drainer: a controller that cannot be contacted is unavailable everywhere") {
  SlurmScriptedShell sh;
  const transport::CommandOutput down{
      1, "", "slurm_load_node error: Unable to contact slurm controller (connect failure)\n"};
  sh.answers["sinfo"] = down;
  sh.answers["scontrol show node"] = down;
  sh.answers["scontrol update"] = {1, "", "slurm_update error: Unable to contact slurm controller (connect failure)\n"};
  modules::SlurmDrainer d(sh);
  auto q = d.Query({});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == modules::kSchedulerUnavailable);
  Status s = d.Drain("n1", "plumb:r:drain");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == modules::kSchedulerUnavailable);
  Status r = d.Resume("n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == modules::kSchedulerUnavailable);
}

TEST_CASE("slurm drainer: an empty node list is unavailable, a node error is not") {
  SlurmScriptedShell sh;
  std::string empty = SlurmDrainerData("sinfo-22.05-drained.json");
  // The same answer with its nodes removed: a controller that answered without its state.
  auto at = empty.find("\"nodes\": [");
  REQUIRE(at != std::string::npos);
  empty = empty.substr(0, at) + "\"nodes\": []\n}\n";
  sh.answers["sinfo --json"] = {0, empty, ""};
  modules::SlurmDrainer d(sh);
  auto q = d.Query({"n1"});
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code == modules::kSchedulerUnavailable);
  SlurmScriptedShell sh2;
  sh2.answers["scontrol update"] = {1, "", "slurm_update error: Invalid node name specified\n"};
  modules::SlurmDrainer d2(sh2);
  Status s = d2.Drain("n9", "x");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code != modules::kSchedulerUnavailable);
}
