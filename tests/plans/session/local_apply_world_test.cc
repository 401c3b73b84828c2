// The apply session's files and streams (plans/session/local_apply_world.h): the plan file read
// back as written, each way it cannot be, and an output file written whole.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "plans/plan/plan_json.h"
#include "plans/report/report_fixture.h"
#include "plans/session/local_apply_world.h"

using namespace plumb;

namespace {

// LocalApplyWorld with the rest of the world refused: only its own parts are under test.
class FilesOnlyWorld final : public plans::LocalApplyWorld {
 public:
  Result<plans::PlannedNow> PlanNow(const std::string&, const std::string&,
                                    const std::string&) override {
    return Diagnostic::Error("test", "not here");
  }
  inventory::LoadedCluster Load(const std::string&, const std::string&) override { return {}; }
  Result<plans::CommitTrust> CheckTrust(const std::string&, const std::string&,
                                        const std::string&) override {
    return Diagnostic::Error("test", "not here");
  }
  plans::Schedulers SchedulersOf(const inventory::Cluster&) override { return {}; }
  std::unique_ptr<modules::Drainer> NoScheduler() override { return nullptr; }
  plans::Answer Ask() override { return plans::Answer::kNo; }
  plans::RolloutResult Run(const plans::Plan&, const plans::RolloutOptions&, plans::RolloutDeps&,
                           const inventory::LoadedCluster&, const std::string&) override {
    return {};
  }
};

std::string WorldTemp(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("plumb-world-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

}  // namespace

TEST_CASE("local_apply_world: a plan file reads back as it was written, digest and all") {
  testing::ReportWorld w;
  plans::Plan p = w.plan;
  const std::string path = WorldTemp("plan.json");
  std::ofstream(path) << plans::SealPlanToFile(p);
  FilesOnlyWorld world;
  auto back = world.ReadPlanFile(path);
  std::filesystem::remove(path);
  REQUIRE(back.ok());
  CHECK(back->digest == p.digest);
  CHECK(plans::VerifyPlanDigest(*back).ok());
}

TEST_CASE("local_apply_world: a plan file that is not there, not JSON, or not a plan") {
  FilesOnlyWorld world;
  const std::string path = WorldTemp("bad.json");
  auto gone = world.ReadPlanFile(path);
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.error().code == "apply.plan");
  CHECK(gone.error().message == "cannot read plan file " + path);
  std::ofstream(path) << "{plan";
  auto garbage = world.ReadPlanFile(path);
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.error().message == path + " is not JSON");
  std::ofstream(path) << R"({"format": "not a plan"})";
  CHECK_FALSE(world.ReadPlanFile(path).ok());
  std::filesystem::remove(path);
}

TEST_CASE("local_apply_world: Write puts the text in the file, whole") {
  FilesOnlyWorld world;
  const std::string path = WorldTemp("out.json");
  REQUIRE(world.Write(path, "{\"a\": 1}\n").ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == "{\"a\": 1}\n");
  std::filesystem::remove(path);
  CHECK_FALSE(world.Write(WorldTemp("no/such/dir/out.json"), "x").ok());
}
